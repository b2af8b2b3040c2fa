package driver

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkSnapshotBig snapshots a demo page of well over 2,000 elements.
func BenchmarkSnapshotBig(b *testing.B) {
	br := attach(b, Options{})
	gotoPage(b, br, siteURL+"/big.html")
	s := snap(b, br, SnapshotOptions{})
	b.ReportMetric(float64(s.Elements), "elements")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := br.Snapshot(ctxT(b), SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFillClick runs a fill then a click on a loopback page.
func BenchmarkFillClick(b *testing.B) {
	br := attach(b, Options{})
	gotoPage(b, br, siteURL+"/shadow.html")
	s := snap(b, br, SnapshotOptions{})
	field, btn := idOf(b, s.Text, `textbox "Shadow field"`), idOf(b, s.Text, `button "Shadow button"`)
	acts, err := ParseActions(json.RawMessage(fmt.Sprintf(`[{"op":"fill","id":"%s","value":"hello"},{"op":"click","id":"%s"}]`, field, btn)))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := br.Run(ctxT(b), acts); err != nil {
			b.Fatal(err)
		}
	}
}
