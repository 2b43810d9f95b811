// Package driverv1 holds the generated code for protocol major 1 of Rivet's
// driver plugin protocol. It is private to the SDK: driver authors use the
// hand-written types in package plugins.
//
// Regenerate after editing driver.proto (from this directory):
//
//	apt-get install -y protobuf-compiler   # protoc 3.21, /usr/include/google/protobuf
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//	go generate ./plugins/internal/proto/...
//
// The generated files are committed so a build needs none of these tools.
package driverv1

//go:generate protoc -I . -I /usr/include --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative driver.proto
