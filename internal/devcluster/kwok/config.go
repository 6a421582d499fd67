package kwok

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
)

// configFS holds one file per concern: the node and pod stages, the
// emulated kubelet metrics and where their usage numbers come from.
//
//go:embed config/*.yaml
var configFS embed.FS

// Config is kwok's configuration for the local cluster: every file of
// config/, in name order, as one multi-document YAML stream for --config.
func Config() []byte {
	files, err := fs.Glob(configFS, "config/*.yaml")
	if err != nil {
		panic(fmt.Sprintf("listing the embedded kwok config: %v", err)) // the pattern is constant
	}
	var out bytes.Buffer
	for _, name := range files {
		data, err := configFS.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("reading the embedded %s: %v", name, err)) // embedded at build time
		}
		if out.Len() > 0 {
			out.WriteString("---\n")
		}
		fmt.Fprintf(&out, "# %s\n", name)
		out.Write(bytes.TrimSpace(data))
		out.WriteString("\n")
	}
	return out.Bytes()
}
