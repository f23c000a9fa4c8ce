package pgtest

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// TestServerTakesOnlyThePassword: the server answers the user with its
// password, and refuses a wrong one.
func TestServerTakesOnlyThePassword(t *testing.T) {
	s := Start(t)
	hostport := strings.TrimPrefix(s.URI, "postgres://"+User+"@")
	for pw, ok := range map[string]bool{Password: true, "wrong": false} {
		db, err := sql.Open("pgx", "postgres://"+User+":"+pw+"@"+hostport)
		if err != nil {
			t.Fatal(err)
		}
		var one int
		err = db.QueryRowContext(context.Background(), "SELECT 1").Scan(&one)
		_ = db.Close()
		if (err == nil) != ok || (ok && one != 1) {
			t.Fatalf("password %q: %v (answered %d)", pw, err, one)
		}
	}
}
