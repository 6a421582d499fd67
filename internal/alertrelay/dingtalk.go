package alertrelay

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxDingTalkBytes bounds a DingTalk message: our own bound, so that a
// storm of alerts stays one readable message.
const maxDingTalkBytes = 16 << 10

// DingTalk is a DingTalk custom robot. With a secret it signs every
// request ("加签"); without one the robot must trust the relay by
// keyword or IP address.
type DingTalk struct {
	// URLFile holds the robot's webhook URL, with its access_token.
	URLFile string
	// SecretFile holds the signing secret (SEC…); "" for none.
	SecretFile string
	Client     *http.Client
	// Now is the clock of the signature's timestamp.
	Now func() time.Time
}

// Name is the robot's route and metric label.
func (*DingTalk) Name() string { return "dingtalk" }

// Check reads the robot's files, as Deliver will.
func (d *DingTalk) Check() error {
	_, err := d.target()
	return err
}

// Deliver sends n as one markdown message.
func (d *DingTalk) Deliver(ctx context.Context, n *Notification) error {
	target, err := d.target()
	if err != nil {
		return err
	}
	msg := Render(n, maxDingTalkBytes)
	body := map[string]any{
		"msgtype":  "markdown",
		"markdown": map[string]string{"title": msg.Title, "text": msg.Text},
	}
	return postJSON(ctx, d.Client, d.Name(), target, body)
}

// target is the webhook URL, signed when there is a secret.
func (d *DingTalk) target() (*url.URL, error) {
	u, err := readURLFile("--dingtalk-url-file", d.URLFile, "access_token")
	if err != nil {
		return nil, err
	}
	if d.SecretFile == "" {
		return u, nil
	}
	secret, err := readSecretFile("--dingtalk-secret-file", d.SecretFile)
	if err != nil {
		return nil, err
	}
	ts := d.Now().UnixMilli()
	u.RawQuery += "&timestamp=" + strconv.FormatInt(ts, 10) + "&sign=" + url.QueryEscape(DingTalkSign(secret, ts))
	return u, nil
}

// DingTalkSign is the signature of a DingTalk request at timestamp ts
// (Unix milliseconds): base64 of HMAC-SHA256, keyed with the secret, of
// the timestamp, a newline and the secret. The robot refuses a timestamp
// more than an hour from its clock.
func DingTalkSign(secret string, ts int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(ts, 10) + "\n" + secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
