// Command etcd is etcd's own server, built from go.etcd.io/etcd/server/v3,
// which ships no main package of its own.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
