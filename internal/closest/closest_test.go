package closest

import "testing"

func TestWord(t *testing.T) {
	for _, tt := range []struct {
		w    string
		want string
	}{{"lenght", "length"}, {"start_url", "start_urls"}, {"zzzzzz", ""}, {"", ""}} {
		if got := Word(tt.w, []string{"length", "start_urls", "keys"}, 3); got != tt.want {
			t.Errorf("Word(%q) = %q, want %q", tt.w, got, tt.want)
		}
	}
	if d := Distance("kitten", "sitting"); d != 3 {
		t.Fatalf("Distance = %d, want 3", d)
	}
}
