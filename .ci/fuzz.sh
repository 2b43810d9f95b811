#!/usr/bin/env bash
# Short fuzz run for CI, called by .ci/run after the tests: every fuzz target
# of a parser that sees untrusted input runs for FUZZTIME (default 5s) on
# top of its committed seed corpus (testdata/fuzz/<Target>/). A finding
# fails the run and leaves the input under that package's testdata/fuzz.
#
# FUZZTIME=10m FUZZPARALLEL=1 bash .ci/fuzz.sh runs the long campaign the
# same way; `go test -fuzz` takes one target at a time, so they run in turn.
# FUZZTARGETS (a regular expression on the target names) runs a subset.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME="${FUZZTIME:-5s}"
FUZZPARALLEL="${FUZZPARALLEL:-$(nproc)}"

# package target — what each parses
targets=(
  "./core/api FuzzVersionHeader"        # X-OpenStack-Ironic-API-Version header
  "./core/api FuzzNodePatch"            # JSON patch bodies (and no Go internals in any API error)
  "./core/api FuzzCreateBodies"         # node and port POST bodies
  "./core/api FuzzPowerBody"            # power state bodies (targets, timeout)
  "./core/api FuzzVIFAttach"            # VIF attach bodies
  "./core/objects FuzzDeserialize"      # versioned-object wire primitives
  "./core/rpc/jsonrpc FuzzJSONRPCHandler"       # JSON-RPC envelopes over HTTP (no Go internals in errors)
  "./core/rpc/jsonrpc FuzzJSONRPCHandlerCallID" # Rivet-Call-Id headers and the reply cache
  "./core/jsonlimit FuzzCheck"          # depth/duplicate/UTF-8 checks of every JSON body
  "./core/jsonlimit FuzzCheckFastMatchesTokens" # its jsontext verdict agrees with the token one
  "./core/objects FuzzFastPaths"        # typed object fast paths agree with the generic ones
  "./core/api FuzzViewDocument"         # JSON documents in views written as encoding/json writes them
  "./db FuzzDecodeObject"               # JSON columns decoded as encoding/json decodes them
  "./core/api FuzzIsUUID"               # the UUID check agrees with the UUID form
  "./core/jsonraw FuzzMembers"          # Valid, Members, Unquote, MarshalsVerbatim agree with encoding/json
  "./core/jsonraw FuzzCanonical"        # a document copied as stored into a list is what decode + encode writes
  "./core/objects FuzzParsePrimitiveFast" # ParsePrimitive's split agrees with json.Unmarshal
  "./core/objects FuzzDecodeMatchesStd"  # Decode builds the object the sorted, deep-copying code built
  "./core/rpc/jsonrpc FuzzParseEnvelopeFast"    # parseEnvelope's split agrees with the encoding/json reading
  "./core/rpc/jsonrpc FuzzRequestBodyFast"      # the hand-written request body is json.Marshal's, byte for byte
  "./core/rpc/jsonrpc FuzzDecodeResponseFast"   # the client's reply split agrees with json.Unmarshal
  "./core/rpc/jsonrpc FuzzWriteResultFast"      # the hand-written success reply is json.Encoder's, byte for byte
  "./drivers/redfish FuzzRedfishResponses" # BMC answers to the Redfish driver
  "./drivers/ipmi FuzzIPMIResponses"    # RMCP+ datagrams to the IPMI driver
  "./core/config FuzzConfigValues"      # configuration files and values
  "./core/htpasswd FuzzParse"           # htpasswd lines
  "./core/conductor/bootserver FuzzRender"     # instance_info rendered into iPXE scripts
  "./core/conductor/bootserver FuzzParseIdent" # /ipxe/{uuid|mac} identifiers
  "./plugins/redact FuzzText"           # any text masked: a URL's password never comes out
  "./plugins FuzzCheckImageRef"         # image references in instance_info/driver_info (validate)
)

out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=()
for t in "${targets[@]}"; do
  read -r pkg name _ <<<"$t"
  [[ "$name" =~ ${FUZZTARGETS:-.} ]] || continue
  printf '==> fuzz %s %s for %s\n' "$pkg" "$name" "$FUZZTIME"
  start=$(date +%s)
  # Minimizing a new input may outlast -fuzztime; cap it so the run ends on time.
  if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime 10s \
      -parallel "$FUZZPARALLEL" "$pkg" 2>&1 | tee "$out"; then
    printf '==> %s done in %ss\n' "$name" "$(( $(date +%s) - start ))"
  elif grep -q 'Failing input written' "$out"; then
    printf '==> %s FOUND A FAILING INPUT (under %s/testdata/fuzz/%s)\n' "$name" "$pkg" "$name"
    failed+=("$name")
  elif grep -q 'context deadline exceeded' "$out"; then
    # go test -fuzz reports this when -fuzztime expires mid-minimization:
    # no input failed, so it is not a finding.
    printf '==> %s done in %ss (stopped while minimizing; no failing input)\n' "$name" "$(( $(date +%s) - start ))"
  else
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
