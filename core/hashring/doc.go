// Package hashring maps nodes to conductors with a consistent hash ring that
// places them exactly as Ironic's does (tooz HashRing with md5), so a mixed
// Ironic-style deployment and every Rivet process agree on a node's owner.
//
// Rules: each host is placed at 2^exponent positions (the md5 of the host
// name hashed incrementally, as tooz does); a key goes to the first position
// strictly after md5(key), wrapping around. Every process must use the same
// exponent. A ring is immutable; rebuild it when membership changes.
package hashring
