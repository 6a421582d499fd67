package dashboards

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubstitute(t *testing.T) {
	values := map[string]string{"name": "N", "namespace": "ml-dev|x", "__rate_interval": "2m"}
	cases := map[string]struct{ in, want string }{
		"plain":              {in: `up{namespace=~"$namespace"}`, want: `up{namespace=~"ml-dev|x"}`},
		"braces":             {in: `up{namespace=~"${namespace}"}`, want: `up{namespace=~"ml-dev|x"}`},
		"format ignored":     {in: `up{namespace=~"${namespace:regex}"}`, want: `up{namespace=~"ml-dev|x"}`},
		"longest name first": {in: `$name $namespace`, want: `N ml-dev|x`},
		"built-in":           {in: `rate(x_total[$__rate_interval])`, want: `rate(x_total[2m])`},
		"prefix of a longer": {in: `$names`, want: `$names`},
		"unknown kept":       {in: `up{node="$node"}`, want: `up{node="$node"}`},
		"regex group kept":   {in: `label_replace(up, "pod", "$1", "exported_pod", "(.+)")`, want: `label_replace(up, "pod", "$1", "exported_pod", "(.+)")`},
		"unclosed brace":     {in: `${namespace`, want: `${namespace`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Substitute(tc.in, values)); diff != "" {
				t.Errorf("Substitute(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
