package endpoint

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
)

// decodeBody reads a request body of at most limit bytes as exactly one
// JSON value into v, refusing unknown fields and anything after the value:
// a body with trailing data is not what any dispatcher sends, so it is
// refused rather than half read.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("more than one JSON value")
	}
	return nil
}
