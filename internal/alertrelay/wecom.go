package alertrelay

import (
	"context"
	"net/http"
)

// maxWeComBytes is the most a WeCom group robot's markdown content may
// hold, in bytes of UTF-8.
const maxWeComBytes = 4096

// WeCom is a WeCom (WeChat Work) group robot.
type WeCom struct {
	// URLFile holds the robot's webhook URL, with its key.
	URLFile string
	Client  *http.Client
}

// Name is the robot's route and metric label.
func (*WeCom) Name() string { return "wecom" }

// Check reads the robot's URL file, as Deliver will.
func (w *WeCom) Check() error {
	_, err := readURLFile("--wecom-url-file", w.URLFile, "key")
	return err
}

// Deliver sends n as one markdown message, cut to the robot's limit.
func (w *WeCom) Deliver(ctx context.Context, n *Notification) error {
	target, err := readURLFile("--wecom-url-file", w.URLFile, "key")
	if err != nil {
		return err
	}
	msg := Render(n, maxWeComBytes)
	body := map[string]any{
		"msgtype":  "markdown",
		"markdown": map[string]string{"content": msg.Text},
	}
	return postJSON(ctx, w.Client, w.Name(), target, body)
}
