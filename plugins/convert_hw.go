package plugins

import "github.com/rivetmetal/rivet/plugins/internal/proto/driverv2"

// biosSettingToProto is a BIOS setting on the wire (the host's reverse is
// in plugins/host).
func biosSettingToProto(st BIOSSetting) *driverv2.BIOSSetting {
	return &driverv2.BIOSSetting{Name: st.Name, Value: st.Value, AttributeType: st.AttributeType,
		AllowableValues: st.AllowableValues, LowerBound: st.LowerBound, UpperBound: st.UpperBound,
		MinLength: st.MinLength, MaxLength: st.MaxLength, ReadOnly: st.ReadOnly, ResetRequired: st.ResetRequired, Unique: st.Unique}
}
