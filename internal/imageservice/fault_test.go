package imageservice

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// countingHandler answers 200 "ok" and counts the calls that reach it.
type countingHandler struct{ calls atomic.Int64 }

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.calls.Add(1)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("ok"))
}

func TestWithFaults(t *testing.T) {
	type answer struct {
		Status     int
		Code       Code // empty when the request passed through
		RetryAfter string
	}
	tests := []struct {
		name   string
		faults []Fault
		paths  []string
		want   []answer
		inner  int64
	}{
		{
			name:   "503 with retry-after on the second call",
			faults: []Fault{{Call: 2, Status: 503, RetryAfterS: 3}},
			paths:  []string{"/resize", "/resize", "/resize"},
			want:   []answer{{200, "", ""}, {503, CodeBusy, "3"}, {200, "", ""}},
			inner:  2,
		},
		{
			name: "status decides the code",
			faults: []Fault{
				{Call: 1, Status: 500}, {Call: 2, Status: 422}, {Call: 3, Status: 413},
				{Call: 4, Status: 415}, {Call: 5, Status: 504}, {Call: 6, Status: 429, RetryAfterS: 1},
				{Call: 7, Status: 400}, {Call: 8, Status: 502},
			},
			paths: []string{"/resize", "/resize", "/resize", "/resize", "/resize", "/resize", "/resize", "/resize"},
			want: []answer{
				{500, CodeInternal, ""}, {422, CodeImageTooLarge, ""}, {413, CodePayloadTooLarge, ""},
				{415, CodeUnsupportedFormat, ""}, {504, CodeTimeout, ""}, {429, CodeBusy, "1"},
				{400, CodeInvalidRequest, ""}, {502, CodeInternal, ""},
			},
			inner: 0,
		},
		{
			name:   "other paths are not counted",
			faults: []Fault{{Call: 2, Status: 503}},
			paths:  []string{"/healthz", "/resize", "/healthz", "/resize", "/resize"},
			want:   []answer{{200, "", ""}, {200, "", ""}, {200, "", ""}, {503, CodeBusy, ""}, {200, "", ""}},
			inner:  4,
		},
		{
			name:   "no faults passes everything",
			faults: nil,
			paths:  []string{"/resize", "/resize"},
			want:   []answer{{200, "", ""}, {200, "", ""}},
			inner:  2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inner := &countingHandler{}
			h := WithFaults(inner, tt.faults)
			var got []answer
			for _, p := range tt.paths {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, p, strings.NewReader("body")))
				a := answer{Status: rec.Code, RetryAfter: rec.Header().Get("Retry-After")}
				if rec.Code != http.StatusOK {
					d := errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
					require.Contains(t, d.Message, "injected fault")
					a.Code = d.Code
				}
				got = append(got, a)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answers mismatch (-want +got):\n%s", diff)
			}
			require.Equal(t, tt.inner, inner.calls.Load(), "calls that reached the service")
		})
	}
}

func TestCheckFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults []Fault
		want   []string // "" for a fault without error
	}{
		{"valid list", []Fault{{Call: 1, Status: 503}, {Call: 2, Status: 500, RetryAfterS: 1}}, []string{"", ""}},
		{"success status", []Fault{{Call: 1, Status: 200}}, []string{"image fault: status 200 is not an HTTP error status (400-599)"}},
		{"repeated call", []Fault{{Call: 1, Status: 500}, {Call: 2, Status: 503}, {Call: 1, Status: 503}},
			[]string{"", "", "image fault: call 1 is failed by an earlier fault (one fault per call)"}},
		{"invalid faults do not claim their call", []Fault{{Call: 1, Status: 200}, {Call: 1, Status: 503}},
			[]string{"image fault: status 200 is not an HTTP error status (400-599)", ""}},
		{"none", nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, err := range CheckFaults(tt.faults) {
				msg := ""
				if err != nil {
					msg = err.Error()
				}
				got = append(got, msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWithFaultsRefusesInvalid: a fault the service cannot inject is not
// dropped silently (it was: status 200 and a repeated call were ignored).
func TestWithFaultsRefusesInvalid(t *testing.T) {
	for _, faults := range [][]Fault{
		{{Call: 1, Status: 200}},
		{{Call: 1, Status: 500}, {Call: 1, Status: 503}},
		{{Call: 0, Status: 503}},
	} {
		require.Panics(t, func() { WithFaults(&countingHandler{}, faults) }, "%+v", faults)
	}
}

func TestWithFaultsConcurrent(t *testing.T) {
	const calls = 64
	faults := []Fault{{Call: 7, Status: 503, RetryAfterS: 2}, {Call: 13, Status: 500}, {Call: calls, Status: 504}}
	inner := &countingHandler{}
	h := WithFaults(inner, faults)
	statuses := make([]int, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/resize", nil))
			statuses[i] = rec.Code
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	want := map[int]int{200: calls - 3, 503: 1, 500: 1, 504: 1}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("status counts mismatch (-want +got):\n%s", diff)
	}
	require.Equal(t, int64(calls-3), inner.calls.Load())
}

func TestWithFaultsRealService(t *testing.T) {
	img := stdImage(t, "testdata/video-001.jpeg")
	h := WithFaults(New(Config{}, nil), []Fault{{Call: 1, Status: 503, RetryAfterS: 1}})
	body := imageBody(t, "a.jpg", img, "32")
	rec := serve(h, "", body)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "1", rec.Header().Get("Retry-After"))
	require.Equal(t, CodeBusy, errorDetail(t, rec.Header().Get("Content-Type"), rec.Body.Bytes()).Code)
	rec = serve(h, "", body)
	require.Equal(t, http.StatusOK, rec.Code, "the retry succeeds")
	require.Equal(t, "32", rec.Header().Get("X-Image-Width"))
}

func TestFaultValidate(t *testing.T) {
	tests := []struct {
		name    string
		fault   Fault
		wantErr string
	}{
		{"valid", Fault{Call: 1, Status: 503, RetryAfterS: 2}, ""},
		{"call zero", Fault{Call: 0, Status: 503}, "call 0"},
		{"success status", Fault{Call: 1, Status: 200}, "status 200"},
		{"status over 599", Fault{Call: 1, Status: 600}, "status 600"},
		{"negative retry", Fault{Call: 1, Status: 503, RetryAfterS: -1}, "retry_after_s -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fault.validate()
			if tt.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.wantErr)
			require.True(t, strings.HasPrefix(err.Error(), "image fault: "), "error %q", err)
		})
	}
}
