package alertrelay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadURLFile(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]struct {
		content string
		wantErr string
	}{
		"https":             {content: "https://robot.example.com/send?key=k-1\n"},
		"http to loopback":  {content: "http://127.0.0.1:9999/send?key=k-1"},
		"http to localhost": {content: "http://localhost:9999/send?key=k-1"},
		"http elsewhere":    {content: "http://robot.example.com/send?key=k-1", wantErr: "the URL is http to robot.example.com: use https (http is allowed only to 127.0.0.1, ::1 or localhost, for tests)"},
		"no token":          {content: "https://robot.example.com/send", wantErr: "the URL has no key parameter"},
		"not a URL":         {content: "key=k-1 secret", wantErr: "the file holds no https URL"},
		"unparsable":        {content: "https://robot.example.com/%zz?key=k-1", wantErr: "the file holds no URL"},
		"empty":             {content: " \n", wantErr: "the file is empty"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(name, " ", "-"), tc.content)
			_, err := readURLFile("--wecom-url-file", path, "key")
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Error %v, want one containing %q", err, tc.wantErr)
			case err != nil && strings.Contains(err.Error(), "k-1"):
				t.Errorf("The error shows the token: %v", err)
			case err != nil && !errors.As(err, new(*ConfigError)):
				t.Errorf("The error is no ConfigError: %v", err)
			}
		})
	}
	_, err := readURLFile("--wecom-url-file", filepath.Join(dir, "absent"), "key")
	if err == nil || !strings.Contains(err.Error(), "no such file; mount the Secret") {
		t.Errorf("A missing file gave %v", err)
	}
}
