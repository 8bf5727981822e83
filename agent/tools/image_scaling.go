package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // DecodeConfig of service responses
	_ "image/png"  // DecodeConfig of service responses
	"io"
	"io/fs"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"
)

// Limits of the image_scaling tool.
const (
	// MinWidth and MaxWidth bound the requested width in pixels.
	MinWidth = 1
	MaxWidth = 4096
	// MaxImageBytes is the largest input file the tool uploads (20 MiB);
	// a larger file fails with payload_too_large without calling the
	// service.
	MaxImageBytes = 20 << 20
	// MaxResponseBytes is the largest resized image the tool accepts from
	// the service (64 MiB); a larger answer is a service_error.
	MaxResponseBytes = 64 << 20
)

// ImageScaling is the image_scaling tool: it resizes a JPEG or PNG file of
// the workspace through the image service (POST {base}/resize) and saves
// the result beside the input as NAME_WIDTH.EXT. Create it with
// NewImageScaling; the zero value is not usable.
type ImageScaling struct {
	ws      *Workspace
	baseURL string
	client  *http.Client
}

// NewImageScaling returns the image_scaling tool for the workspace ws,
// talking to the image service at baseURL (for example
// "http://127.0.0.1:8080"; a trailing "/" is ignored) through client
// (http.DefaultClient when nil). The client's Transport is where replay
// and recording plug in; its Timeout, when set, bounds each call.
func NewImageScaling(ws *Workspace, baseURL string, client *http.Client) *ImageScaling {
	if client == nil {
		client = http.DefaultClient
	}
	return &ImageScaling{ws: ws, baseURL: strings.TrimRight(baseURL, "/"), client: client}
}

var (
	_ Tool          = (*ImageScaling)(nil)
	_ Parameterized = (*ImageScaling)(nil)
)

// scalingParameters is the JSON Schema of image_scaling's native
// arguments, the JSON form ParseScalingInput reads.
var scalingParameters = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"The image path relative to the workspace, for example picture/window.jpg."},` +
	`"width":{"type":"integer","minimum":` + strconv.Itoa(MinWidth) + `,"maximum":` + strconv.Itoa(MaxWidth) +
	`,"description":"The new width in pixels; the aspect ratio is kept."}},"required":["path","width"]}`

// Name returns "image_scaling".
func (*ImageScaling) Name() string { return "image_scaling" }

// Parameters returns image_scaling's arguments schema: an object with a
// string "path" and an integer "width" from MinWidth to MaxWidth, both
// required.
func (*ImageScaling) Parameters() json.RawMessage { return json.RawMessage(scalingParameters) }

// Description tells the model what image_scaling does and its exact input
// and output formats.
func (*ImageScaling) Description() string {
	return "Resizes a JPEG or PNG image in the workspace to a new width in pixels, keeping the aspect ratio, " +
		"and saves the result beside the original as NAME_WIDTH.EXT (an existing file is never overwritten). " +
		"Input: the image path relative to the workspace, one space, then the width as a whole number from 1 to 4096, " +
		"for example `picture/window.jpg 256`. " +
		`JSON input also works: {"path":"picture/window.jpg","width":256}. ` +
		`Output: JSON with the saved file and its pixel size, for example {"output":"picture/window_256.jpg","width":256,"height":171}.`
}

// scalingResult is the success text of image_scaling.
type scalingResult struct {
	Output string `json:"output"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// Execute resizes the image named by input ("PATH WIDTH" or JSON
// {"path":…,"width":…}, the form native tool calls send; see
// ParseScalingInput). It returns compact JSON
// {"output":"DIR/NAME_WIDTH.EXT","width":W,"height":H} with the output
// path relative to the workspace and the pixel size reported by the
// service (X-Image-Width / X-Image-Height, else decoded from the bytes).
//
// Errors are *Error with these codes: invalid_input (bad input or width,
// not a regular file, HTTP 400), path_outside_workspace, file_not_found,
// unsupported_format (extension or magic bytes, HTTP 415),
// payload_too_large (file over MaxImageBytes, HTTP 413), output_exists,
// service_unavailable (retryable: unreachable service, 502/503/504,
// timeout or ctx done — Err then wraps ctx.Err()), service_error (any
// other status or a bad answer).
func (t *ImageScaling) Execute(ctx context.Context, input string) (string, error) {
	req, err := ParseScalingInput(input)
	if err != nil {
		return "", err
	}
	src, data, err := t.readInput(req.Path)
	if err != nil {
		return "", err
	}
	ext := filepath.Ext(src)
	name := strings.TrimSuffix(filepath.Base(src), ext)
	dst := filepath.Join(filepath.Dir(src), name+"_"+strconv.Itoa(req.Width)+ext)
	if _, err := t.ws.fs.Lstat(dst); err == nil {
		return "", outputExists(filepath.ToSlash(dst))
	}

	out, hdr, err := t.post(ctx, filepath.Base(src), formatOfExt(ext), data, req.Width)
	if err != nil {
		return "", err
	}
	w, h, err := pixelSize(hdr, out)
	if err != nil {
		return "", err
	}
	if err := writeNew(t.ws.fs, dst, out); err != nil {
		if te := (*Error)(nil); errors.As(err, &te) && te.Code == CodeOutputExists {
			return "", te
		}
		if escapes(err) {
			return "", &Error{Code: CodePathOutsideWorkspace, Message: fmt.Sprintf("image_scaling: save %s: its folder now leads outside the workspace through a symbolic link", filepath.ToSlash(dst)), Err: err}
		}
		return "", &Error{Code: CodeToolError, Message: fmt.Sprintf("image_scaling: save %s: %v", filepath.ToSlash(dst), err), Err: err}
	}
	b, err := json.Marshal(scalingResult{Output: filepath.ToSlash(dst), Width: w, Height: h})
	if err != nil {
		return "", fmt.Errorf("image_scaling: encode result: %w", err)
	}
	return string(b), nil
}

// readInput reads the image the model named at path (as it wrote it)
// through the workspace and returns its root-relative native path and
// content. It checks, on the opened file, that it is a regular file of a
// supported format no larger than MaxImageBytes.
func (t *ImageScaling) readInput(path string) (string, []byte, error) {
	src, fi, err := t.ws.stat(path)
	if err != nil {
		return "", nil, err
	}
	notRegular := &Error{Code: CodeInvalidInput, Message: fmt.Sprintf("image_scaling: %q is not a regular file; give the path of a .jpg, .jpeg or .png file", path)}
	if !fi.Mode().IsRegular() {
		return "", nil, notRegular
	}
	ext := filepath.Ext(src)
	wantFormat := formatOfExt(ext)
	if wantFormat == "" {
		return "", nil, &Error{Code: CodeUnsupportedFormat, Message: fmt.Sprintf("image_scaling: %q has extension %q; only .jpg, .jpeg and .png are supported", path, ext)}
	}
	if fi.Size() > MaxImageBytes {
		return "", nil, &Error{Code: CodePayloadTooLarge, Message: fmt.Sprintf("image_scaling: %q is %d bytes; the limit is %d", path, fi.Size(), MaxImageBytes)}
	}
	// The file is read from what was opened, so a file swapped in since
	// the stat above is checked again.
	data, err := t.ws.readRegular(src, MaxImageBytes)
	switch {
	case err == nil:
	case errors.Is(err, errNotRegular):
		return "", nil, notRegular
	case errors.Is(err, errTooLarge):
		return "", nil, &Error{Code: CodePayloadTooLarge, Message: fmt.Sprintf("image_scaling: %q is over the limit of %d bytes", path, MaxImageBytes)}
	case escapes(err) || missing(err):
		return "", nil, t.ws.statError(path, err)
	default:
		return "", nil, &Error{Code: CodeInvalidInput, Message: fmt.Sprintf("image_scaling: read %q: %v", path, err), Err: err}
	}
	if got := sniffFormat(data); got != wantFormat {
		what := "not an image"
		if got != "" {
			what = "a " + strings.ToUpper(got) + " image"
		}
		return "", nil, &Error{Code: CodeUnsupportedFormat, Message: fmt.Sprintf("image_scaling: %q has a %s extension but its content is %s", path, ext, what)}
	}
	return src, data, nil
}

// ScalingInput is a parsed image_scaling input.
type ScalingInput struct {
	// Path is the image path as the model wrote it (surrounding quotes
	// removed).
	Path string `json:"path"`
	// Width is the requested width in pixels, MinWidth to MaxWidth.
	Width int `json:"width"`
}

// ParseScalingInput parses an image_scaling input: "PATH WIDTH", where
// WIDTH is the last whitespace-separated field (so PATH may contain
// spaces and may be wrapped in matching quotes), or a JSON object
// {"path":"…","width":N} whose width is a number or a numeric string.
// Errors are *Error with code invalid_input and say what was expected.
func ParseScalingInput(input string) (ScalingInput, error) {
	s := strings.TrimSpace(input)
	if s == "" {
		return ScalingInput{}, invalidInput("the input is empty")
	}
	var (
		path     string
		widthStr string
	)
	if strings.HasPrefix(s, "{") {
		var raw struct {
			Path  *string         `json:"path"`
			Width json.RawMessage `json:"width"`
		}
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			return ScalingInput{}, invalidInput("the JSON input is malformed: " + err.Error())
		}
		if raw.Path == nil {
			return ScalingInput{}, invalidInput(`the JSON input has no "path"`)
		}
		path = strings.TrimSpace(*raw.Path)
		if len(raw.Width) == 0 || string(raw.Width) == "null" {
			return ScalingInput{}, invalidInput(`the JSON input has no "width"`)
		}
		var ws string
		if err := json.Unmarshal(raw.Width, &ws); err == nil {
			widthStr = strings.TrimSpace(ws)
		} else {
			widthStr = string(raw.Width)
		}
	} else {
		i := strings.LastIndexFunc(s, unicode.IsSpace)
		if i < 0 {
			if _, err := strconv.Atoi(s); err == nil {
				return ScalingInput{}, invalidInput("the path is missing")
			}
			return ScalingInput{}, invalidInput("the width is missing")
		}
		path = strings.TrimSpace(s[:i])
		widthStr = s[i+1:]
		if _, err := strconv.ParseFloat(widthStr, 64); err != nil {
			return ScalingInput{}, invalidInput(fmt.Sprintf("the last field %q is not a width", widthStr))
		}
	}
	path = unquote(path)
	if path == "" {
		return ScalingInput{}, invalidInput("the path is missing")
	}
	width, err := strconv.Atoi(widthStr)
	if err != nil {
		f, ferr := strconv.ParseFloat(widthStr, 64)
		if ferr != nil || f != float64(int64(f)) || f < MinWidth-1 || f > MaxWidth+1 {
			return ScalingInput{}, invalidInput(fmt.Sprintf("the width %s is not a whole number from %d to %d", widthStr, MinWidth, MaxWidth))
		}
		width = int(f)
	}
	if width < MinWidth || width > MaxWidth {
		return ScalingInput{}, invalidInput(fmt.Sprintf("the width %d is out of range; use %d to %d", width, MinWidth, MaxWidth))
	}
	return ScalingInput{Path: path, Width: width}, nil
}

// Bounds of the folder listing Recover returns: at most maxListedImages
// names of at most maxListedBytes bytes in all, so that the listing fits
// in an observation whatever the folder holds.
const (
	maxListedImages = 50
	maxListedBytes  = 1000
)

// imageList is what Recover returns for file_not_found.
type imageList struct {
	Dir             string   `json:"dir"`
	AvailableImages []string `json:"available_images"`
	// MoreImages is how many further images the folder holds that are
	// not listed (0: the list is complete).
	MoreImages int `json:"more_images,omitempty"`
}

// Truncated reports whether the listing leaves images out; the agent then
// marks the observation truncated.
func (l imageList) Truncated() bool { return l.MoreImages > 0 }

// Recover helps the model after a failed call. For code file_not_found it
// returns the image files (.jpg, .jpeg, .png; sorted workspace-relative
// slash paths) in the folder of the requested path, or in its nearest
// existing parent folder inside the workspace, as
// {"dir":"picture","available_images":["picture/window.jpg"]}. The list
// holds the first 50 names, within 1000 bytes; a longer
// one says how many it leaves out as "more_images": N, and its Truncated
// method reports true. ok is false for any other code, for an unparseable
// input or a path outside the workspace, and when the folder holds no
// images.
func (t *ImageScaling) Recover(ctx context.Context, input string, code Code) (any, bool, error) {
	if code != CodeFileNotFound {
		return nil, false, nil
	}
	req, err := ParseScalingInput(input)
	if err != nil {
		return nil, false, nil
	}
	rel, err := t.ws.lexical(req.Path)
	if err != nil {
		return nil, false, nil
	}
	dir, ok, err := t.ws.nearestDir(ctx, filepath.Dir(rel))
	if !ok || err != nil {
		return nil, false, err
	}
	names, err := t.ws.readDirNames(dir, func(e fs.DirEntry) bool {
		return e.Type().IsRegular() && formatOfExt(filepath.Ext(e.Name())) != ""
	})
	if err != nil {
		return nil, false, fmt.Errorf("image_scaling: recover: %w", err)
	}
	if len(names) == 0 {
		return nil, false, nil
	}
	list := imageList{Dir: filepath.ToSlash(dir), AvailableImages: []string{}}
	size := 0
	for _, n := range names {
		p := filepath.ToSlash(filepath.Join(dir, n))
		if len(list.AvailableImages) == maxListedImages || size+len(p) > maxListedBytes {
			break
		}
		list.AvailableImages = append(list.AvailableImages, p)
		size += len(p)
	}
	list.MoreImages = len(names) - len(list.AvailableImages)
	return list, true, nil
}

// serviceError is the error body of the image service.
type serviceError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// post sends the multipart resize request and returns the response body
// and headers of a 200 answer.
func (t *ImageScaling) post(ctx context.Context, filename, format string, data []byte, width int) ([]byte, http.Header, error) {
	body, contentType, err := multipartBody(filename, format, data, width)
	if err != nil {
		return nil, nil, fmt.Errorf("image_scaling: build request: %w", err)
	}
	url := t.baseURL + "/resize"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, &Error{Code: CodeServiceError, Message: fmt.Sprintf("image_scaling: bad image service URL %q: %v", t.baseURL, err), Err: err}
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, nil, transportError(ctx, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, nil, transportError(ctx, url, err)
	}
	if resp.StatusCode == http.StatusOK {
		if len(out) > MaxResponseBytes {
			return nil, nil, &Error{Code: CodeServiceError, Message: fmt.Sprintf("image_scaling: the image service answered more than %d bytes", MaxResponseBytes)}
		}
		return out, resp.Header, nil
	}
	return nil, nil, statusError(resp, out)
}

// statusError maps a non-200 answer of the image service to an *Error.
func statusError(resp *http.Response, body []byte) error {
	detail := fmt.Sprintf("HTTP %d", resp.StatusCode)
	var se serviceError
	if json.Unmarshal(body, &se) == nil && (se.Error.Code != "" || se.Error.Message != "") {
		detail += " " + strings.TrimSpace(se.Error.Code+": "+se.Error.Message)
		detail = strings.TrimSuffix(detail, ":")
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		detail += "; retry after " + ra + "s"
	}
	e := &Error{Message: "image_scaling: the image service refused the request: " + detail}
	switch resp.StatusCode {
	case http.StatusBadRequest:
		e.Code = CodeInvalidInput
	case http.StatusUnsupportedMediaType:
		e.Code = CodeUnsupportedFormat
	case http.StatusRequestEntityTooLarge:
		e.Code = CodePayloadTooLarge
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		e.Code, e.Retryable = CodeServiceUnavailable, true
		e.Message = "image_scaling: the image service is unavailable: " + detail
	case http.StatusTooManyRequests:
		e.Code, e.Retryable = CodeServiceError, true
	default:
		e.Code = CodeServiceError
	}
	return e
}

// transportError maps a failed round trip to an *Error.
func transportError(ctx context.Context, url string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &Error{Code: CodeServiceUnavailable, Retryable: true,
			Message: fmt.Sprintf("image_scaling: the request to the image service was stopped: %v", cerr),
			Err:     fmt.Errorf("%w (%w)", cerr, err)}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Code: CodeServiceUnavailable, Retryable: true,
			Message: fmt.Sprintf("image_scaling: the image service at %s did not answer in time", url), Err: err}
	}
	how := "is unreachable"
	if errors.Is(err, syscall.ECONNREFUSED) {
		how = "refused the connection"
	}
	return &Error{Code: CodeServiceUnavailable, Retryable: true,
		Message: fmt.Sprintf("image_scaling: the image service at %s %s; start it with `go run ./cmd/imaged`", url, how), Err: err}
}

// multipartBody builds the resize request body: a file part "image"
// (filename = the input's base name, Content-Type image/jpeg or image/png)
// followed by a field "width". The boundary is "agenthub-" plus the first
// 40 hex digits of SHA-256(filename, width, content), so the same request
// always has the same bytes and cassettes re-record identically; in the
// astronomically unlikely case that the content contains it, the hash is
// chained until it does not.
func multipartBody(filename, format string, data []byte, width int) ([]byte, string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00", filename, width)
	h.Write(data)
	sum := h.Sum(nil)
	boundary := "agenthub-" + hex.EncodeToString(sum[:20])
	for bytes.Contains(data, []byte(boundary)) {
		next := sha256.Sum256([]byte(boundary))
		boundary = "agenthub-" + hex.EncodeToString(next[:20])
	}
	var buf bytes.Buffer
	buf.Grow(len(data) + 512)
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(boundary); err != nil {
		return nil, "", err
	}
	ph := make(textproto.MIMEHeader)
	ph.Set("Content-Disposition", fmt.Sprintf(`form-data; name="image"; filename=%q`, escapeQuotes(filename)))
	ph.Set("Content-Type", "image/"+format)
	pw, err := mw.CreatePart(ph)
	if err != nil {
		return nil, "", err
	}
	if _, err := pw.Write(data); err != nil {
		return nil, "", err
	}
	if err := mw.WriteField("width", strconv.Itoa(width)); err != nil {
		return nil, "", err
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// escapeQuotes escapes a file name for a Content-Disposition parameter the
// way mime/multipart does.
func escapeQuotes(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// pixelSize returns the size of the resized image from the X-Image-Width
// and X-Image-Height headers, else from the image bytes.
func pixelSize(hdr http.Header, data []byte) (int, int, error) {
	w, werr := strconv.Atoi(hdr.Get("X-Image-Width"))
	h, herr := strconv.Atoi(hdr.Get("X-Image-Height"))
	if werr == nil && herr == nil && w > 0 && h > 0 {
		return w, h, nil
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, &Error{Code: CodeServiceError, Message: fmt.Sprintf("image_scaling: the image service answered %d bytes that are not an image", len(data)), Err: err}
	}
	return cfg.Width, cfg.Height, nil
}

// writeNew writes data to path (relative to root) atomically and never
// replaces an existing file: it writes a temporary file in the same
// folder, then hard-links it to path (which fails if path exists) or,
// where hard links are not supported, renames it after checking that path
// is still free. It returns an *Error with code output_exists when path
// is taken.
func writeNew(root *os.Root, path string, data []byte) (err error) {
	f, tmp, err := createTemp(root, filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-"))
	if err != nil {
		return err
	}
	defer func() {
		if rerr := root.Remove(tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := root.Chmod(tmp, 0o644); err != nil {
		return err
	}
	lerr := root.Link(tmp, path)
	if lerr == nil {
		return nil
	}
	if errors.Is(lerr, fs.ErrExist) {
		return outputExists(filepath.ToSlash(path))
	}
	if _, serr := root.Lstat(path); serr == nil {
		return outputExists(filepath.ToSlash(path))
	}
	return root.Rename(tmp, path)
}

// createTemp creates a new file prefix+RANDOM in root (mode 0600, as
// os.CreateTemp) and returns it with its name.
func createTemp(root *os.Root, prefix string) (*os.File, string, error) {
	for range 100 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fmt.Errorf("create a temporary file %s*: too many name collisions", prefix)
}

// outputExists is the output_exists error for the file rel.
func outputExists(rel string) *Error {
	return &Error{Code: CodeOutputExists, Message: fmt.Sprintf("image_scaling: %s already exists; delete it or choose another width", rel)}
}

// invalidInput is an invalid_input error that reminds the model of the
// expected format.
func invalidInput(why string) *Error {
	return &Error{Code: CodeInvalidInput, Message: "image_scaling: " + why + `; expected "PATH WIDTH", for example "picture/window.jpg 256", or {"path":"picture/window.jpg","width":256}`}
}

// unquote removes one pair of matching surrounding quotes (", ' or `).
func unquote(s string) string {
	if len(s) >= 2 {
		switch q := s[0]; q {
		case '"', '\'', '`':
			if s[len(s)-1] == q {
				return strings.TrimSpace(s[1 : len(s)-1])
			}
		}
	}
	return s
}

// formatOfExt returns "jpeg" or "png" for a supported extension (any
// case), "" otherwise.
func formatOfExt(ext string) string {
	switch strings.ToLower(ext) {
	case ".jpg", ".jpeg":
		return "jpeg"
	case ".png":
		return "png"
	}
	return ""
}

// sniffFormat returns "jpeg", "png" or "gif" from the magic bytes of data,
// "" for anything else.
func sniffFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "gif"
	}
	return ""
}
