"""Drive Debian's python3-openstacksdk against a Rivet API.

Run by core/api's TestOpenstackSDK: argv[1] is the API's endpoint. It
prints one JSON object of what each call returned; the Go test checks it.
Any exception fails the run (non-zero exit, traceback on stderr).
"""
import json
import sys

import openstack

conn = openstack.connect(auth_type="none", baremetal_endpoint_override=sys.argv[1],
                         baremetal_api_version="1", load_yaml_config=False, load_envvars=False)
bm = conn.baremetal
out = {}

node = bm.create_node(driver="fake-hardware", name="n1", resource_class="gold")
for verb in ("manage", "provide"):
    node = bm.set_node_provision_state(node, verb, wait=True, timeout=30)
out["node"] = {"uuid": node.id, "provision_state": node.provision_state}
bm.set_node_power_state(node, "power off")

# Traits (1.37).
bm.set_node_traits(node, ["CUSTOM_A", "CUSTOM_B"])
bm.add_node_trait(node, "CUSTOM_C")
bm.remove_node_trait(node, "CUSTOM_A")
out["traits"] = sorted(bm.get_node(node.id).traits)

# Allocations (1.52, 1.57, 1.58).
alloc = bm.create_allocation(resource_class="gold", name="a1")
alloc = bm.wait_for_allocation(alloc, timeout=30)
out["allocation"] = {"state": alloc.state, "node_id": alloc.node_id, "name": alloc.name}
bm.update_allocation(alloc, name="a2", extra={"k": "v"})
got = bm.get_allocation("a2")
out["allocation_updated"] = {"name": got.name, "extra": got.extra}
out["allocations"] = [a.id for a in bm.allocations()]
bm.delete_allocation(alloc)
out["allocations_after_delete"] = [a.id for a in bm.allocations()]

# Conductors (1.49).
out["conductors"] = [c.hostname for c in bm.conductors()]
c = bm.get_conductor(out["conductors"][0])
out["conductor"] = {"hostname": c.hostname, "alive": c.alive, "drivers": c.drivers}

# Deploy templates (1.55).
steps = [{"interface": "bios", "step": "apply_configuration", "priority": 150,
          "args": {"settings": [{"name": "LogicalProc", "value": "Enabled"}]}}]
dt = bm.create_deploy_template(name="CUSTOM_HYPERTHREADING_ON", steps=steps)
bm.update_deploy_template(dt, extra={"k": "v"})
got = bm.get_deploy_template("CUSTOM_HYPERTHREADING_ON")
out["deploy_template"] = {"name": got.name, "extra": got.extra, "steps": got.steps}
out["deploy_templates"] = [d.name for d in bm.deploy_templates()]
bm.delete_deploy_template(dt)
out["deploy_templates_after_delete"] = [d.name for d in bm.deploy_templates()]

print(json.dumps(out))
