// Package driverv2 holds the generated code for what protocol major 2 of
// Rivet's driver plugin protocol adds to major 1: the Power service (power
// interface version 2). It is private to the SDK: driver authors use the
// hand-written types in package plugins.
//
// Regenerate after editing power.proto (from this directory), with the
// tools named in ../driverv1/doc.go:
//
//	go generate ./plugins/internal/proto/...
//
// The generated files are committed so a build needs none of these tools.
package driverv2

//go:generate protoc -I . -I ../driverv1 -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative power.proto

// raid.proto: the RAID service (raid interface version 1).
//go:generate protoc -I . -I ../driverv1 -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative raid.proto
//go:generate protoc -I . -I ../driverv1 -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative sensors.proto
//go:generate protoc -I . -I ../driverv1 -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative management2.proto
//go:generate protoc -I . -I ../driverv1 -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative console.proto
