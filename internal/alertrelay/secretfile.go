package alertrelay

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

// The robots' URLs and the signing secret come from files, as a
// Kubernetes Secret volume provides them, and are read on every request:
// a rotated Secret takes effect without a restart. Errors name the file,
// never its content.

// readURLFile reads a robot's webhook URL from path and checks it: https
// (http only to 127.0.0.1, ::1 or localhost, for tests and local robots),
// with its token in the query parameter tokenParam.
func readURLFile(flag, path, tokenParam string) (*url.URL, error) {
	u, err := parseURLFile(flag, path, tokenParam)
	if err != nil {
		return nil, &ConfigError{Err: err}
	}
	return u, nil
}

func parseURLFile(flag, path, tokenParam string) (*url.URL, error) {
	raw, err := readTrimmed(flag, path)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes its input: keep the token out of the error.
		return nil, fmt.Errorf("%s=%s: the file holds no URL; write the robot's whole webhook URL into it", flag, path)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopback(u.Hostname()):
	case u.Scheme == "http":
		return nil, fmt.Errorf("%s=%s: the URL is http to %s: use https (http is allowed only to 127.0.0.1, ::1 or localhost, for tests)", flag, path, u.Hostname())
	default:
		return nil, fmt.Errorf("%s=%s: the file holds no https URL; write the robot's whole webhook URL into it", flag, path)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s=%s: the URL has no host", flag, path)
	}
	if u.Query().Get(tokenParam) == "" {
		return nil, fmt.Errorf("%s=%s: the URL has no %s parameter; copy the robot's whole webhook URL, token included", flag, path, tokenParam)
	}
	return u, nil
}

// readSecretFile reads the DingTalk signing secret from path.
func readSecretFile(flag, path string) (string, error) {
	s, err := readTrimmed(flag, path)
	if err != nil {
		return "", &ConfigError{Err: err}
	}
	return s, nil
}

// readTrimmed reads a file without the surrounding whitespace a
// `kubectl create secret --from-file` may leave in it.
func readTrimmed(flag, path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s=%s: no such file; mount the Secret that holds it, or fix the path", flag, path)
		}
		return "", fmt.Errorf("%s=%s: %w", flag, path, err)
	}
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", fmt.Errorf("%s=%s: the file is empty", flag, path)
	}
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
