package alertrelay

import (
	"net/url"
	"testing"
	"time"
)

// The signature of a fixed timestamp and secret, computed apart from Go:
//
//	printf '1700000000000\nSEC0123456789abcdef' |
//	  openssl dgst -sha256 -hmac 'SEC0123456789abcdef' -binary | base64
const (
	vectorSecret    = "SEC0123456789abcdef"
	vectorTimestamp = int64(1700000000000)
	vectorSign      = "TSZbRFUuvaSQaRKUpF970OPCb2/LcQAP3wOvwZIzBZk="
)

func TestDingTalkSignMatchesOpenSSL(t *testing.T) {
	if got := DingTalkSign(vectorSecret, vectorTimestamp); got != vectorSign {
		t.Errorf("DingTalkSign(%q, %d) = %q, want %q", vectorSecret, vectorTimestamp, got, vectorSign)
	}
	if got := DingTalkSign(vectorSecret+"x", vectorTimestamp); got == vectorSign {
		t.Error("Another secret gave the same signature")
	}
	if got := DingTalkSign(vectorSecret, vectorTimestamp+1); got == vectorSign {
		t.Error("Another timestamp gave the same signature")
	}
}

// The signed URL keeps the access token and appends the timestamp and
// the URL-encoded signature ('/' and '=' of base64 escaped).
func TestDingTalkTargetIsSigned(t *testing.T) {
	dir := t.TempDir()
	d := &DingTalk{
		URLFile:    writeFile(t, dir, "url", "https://robot.example.com/robot/send?access_token=tok123\n"),
		SecretFile: writeFile(t, dir, "secret", vectorSecret+"\n"),
		Now:        func() time.Time { return time.UnixMilli(vectorTimestamp) },
	}
	u, err := d.target()
	if err != nil {
		t.Fatal(err)
	}
	want := "https://robot.example.com/robot/send?access_token=tok123&timestamp=1700000000000&sign=TSZbRFUuvaSQaRKUpF970OPCb2%2FLcQAP3wOvwZIzBZk%3D"
	if u.String() != want {
		t.Errorf("Signed URL\n got %s\nwant %s", u, want)
	}
	q, _ := url.ParseQuery(u.RawQuery)
	if q.Get("sign") != vectorSign {
		t.Errorf("sign decodes to %q, want %q", q.Get("sign"), vectorSign)
	}

	d.SecretFile = ""
	u, err = d.target()
	if err != nil {
		t.Fatal(err)
	}
	if u.String() != "https://robot.example.com/robot/send?access_token=tok123" {
		t.Errorf("Without a secret the URL is %s, want it unsigned", u)
	}
}
