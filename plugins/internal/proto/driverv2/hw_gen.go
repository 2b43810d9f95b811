package driverv2

// The BIOS and Firmware services (bios.proto, firmware.proto), generated as
// doc.go says for power.proto.

//go:generate protoc -I . -I ../driverv1 -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative bios.proto firmware.proto
