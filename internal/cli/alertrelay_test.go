package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAlertRelayRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	url := filepath.Join(dir, "url")
	if err := os.WriteFile(url, []byte("https://robot.example.com/robot/send?access_token=abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args []string
		want string
	}{
		"no robot":       {want: "no robot is configured: give --dingtalk-url-file, --wecom-url-file or both"},
		"missing file":   {args: []string{"--wecom-url-file=" + dir + "/absent"}, want: "--wecom-url-file=" + dir + "/absent: no such file"},
		"bad log level":  {args: []string{"--dingtalk-url-file=" + url, "--log-level=loud"}, want: `--log-level="loud"`},
		"secret without": {args: []string{"--dingtalk-secret-file=" + url}, want: "--dingtalk-secret-file without --dingtalk-url-file"},
		"arguments":      {args: []string{"extra"}, want: "unknown command"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			root := NewRootCommand()
			root.SetArgs(append([]string{"alert-relay"}, tc.args...))
			root.SetOut(&bytes.Buffer{})
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !isUsageError(err) {
				t.Errorf("alert-relay %v = %v, want a usage error containing %q", tc.args, err, tc.want)
			}
		})
	}
}
