package tide

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseScheduleAnnotation(t *testing.T) {
	value := "Europe/Berlin 0 7 * * 1-5 - 0 22 * * 1-5 = 8;  UTC @daily - 0 12 * * * = 2 ;"
	got, err := ParseScheduleAnnotation(value)
	if err != nil {
		t.Fatal(err)
	}
	want := []CronTrigger{
		{Timezone: "Europe/Berlin", Start: "0 7 * * 1-5", End: "0 22 * * 1-5", DesiredReplicas: 8},
		{Timezone: "UTC", Start: "@daily", End: "0 12 * * *", DesiredReplicas: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("triggers (-want +got):\n%s", diff)
	}
	again, err := ParseScheduleAnnotation(FormatScheduleAnnotation(got))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again); diff != "" {
		t.Errorf("formatted and read again (-want +got):\n%s", diff)
	}
}

func TestParseScheduleAnnotationErrors(t *testing.T) {
	tests := map[string][]string{
		"":                                   {"is empty"},
		"UTC 0 7 * * * 0 22 * * * = 8":       {"window 1", `lone "-"`},
		"UTC 0 7 * * * - 0 22 * * * 8":       {"window 1", `lone "-" and "="`},
		"UTC 0 7 * * * - 0 22 * * * = eight": {`replicas "eight"`},
		"UTC 0 7 * * * - 0 22 * * * = 8; UTC 0 7 * * - 0 22 * * * = 8": {"window 2", `start "0 7 * *"`, "expected exactly 5 fields"},
		"Berlin 0 7 * * * - 0 22 * * * = 8":                            {`timezone "Berlin"`},
	}
	for value, want := range tests {
		t.Run(value, func(t *testing.T) {
			_, err := ParseScheduleAnnotation(value)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestParseWarmUpAnnotation(t *testing.T) {
	if d, err := ParseWarmUpAnnotation(" 90s "); err != nil || d != 90*time.Second {
		t.Errorf("90s = %s, %v", d, err)
	}
	for _, bad := range []string{"three minutes", "-1m"} {
		if _, err := ParseWarmUpAnnotation(bad); err == nil || !strings.Contains(err.Error(), WarmUpAnnotation) {
			t.Errorf("%q: error %v, want one naming %s", bad, err, WarmUpAnnotation)
		}
	}
}
