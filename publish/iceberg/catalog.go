package iceberg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"modernc.org/sqlite" // also the "sqlite" database/sql driver
	sqlite3 "modernc.org/sqlite/lib"
)

// Options says which catalog holds the table and where its files go.
type Options struct {
	// Catalog is the catalog's kind: "sql" (the default) or "rest".
	Catalog string
	// URI locates the catalog. For "sql": "sqlite:///abs/path/catalog.db"
	// (the file and its folder are created if missing) or
	// "postgres://user@host:port/db" (the password comes from PGPASSWORD,
	// never from the URI). For "rest": the REST catalog's URL; a bearer
	// token comes from ICEBERG_REST_TOKEN, or client credentials
	// ("id:secret") from ICEBERG_REST_CREDENTIAL.
	URI string
	// Warehouse is where a new table's data and metadata files go (an
	// existing table keeps its location): for "sql", "file:///abs/path"
	// or "s3://bucket/prefix?params" (see ParseWarehouse; S3 credentials
	// come from the AWS SDK's environment, not from Getenv); for "rest",
	// the warehouse as the REST catalog names it (empty: the catalog's
	// default).
	Warehouse string
	// Namespace and Table name the table (output iceberg://NAMESPACE.TABLE);
	// a dotted Namespace is a nested one.
	Namespace, Table string
	// Config, when not empty, is recorded in every snapshot summary as
	// databrew.config.
	Config string
	// Getenv reads the environment for secrets; nil means os.Getenv.
	Getenv func(string) string
}

// The catalog kinds of Options.Catalog.
const (
	CatalogSQL  = "sql"
	CatalogREST = "rest"
)

// catalogName is the name the SQL catalog stores in its rows: tables
// written by the stage share it, so that another SQL-catalog client opened
// with this name sees them.
const catalogName = "databrew"

// identifier returns the table's identifier from o.
func (o *Options) identifier() ([]string, error) {
	if o.Namespace == "" || o.Table == "" {
		return nil, fmt.Errorf("iceberg output: both a namespace and a table name are needed (iceberg://NAMESPACE.TABLE), got namespace %q and table %q", o.Namespace, o.Table)
	}
	if strings.Contains(o.Table, ".") {
		return nil, fmt.Errorf("iceberg table name %q contains a dot", o.Table)
	}
	ns := strings.Split(o.Namespace, ".")
	for _, part := range ns {
		if part == "" {
			return nil, fmt.Errorf("iceberg namespace %q has an empty part", o.Namespace)
		}
	}
	return append(ns, o.Table), nil
}

// redactedURI returns uri without a password, for messages and IDs.
func redactedURI(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.User == nil {
		return uri
	}
	if _, has := u.User.Password(); !has {
		return uri
	}
	u.User = url.User(u.User.Username())
	return u.String()
}

// openCatalog connects to the catalog o names. close releases what it
// opened (the database handle for the SQL catalog).
func openCatalog(ctx context.Context, o *Options) (cat catalog.Catalog, close func() error, err error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	switch o.Catalog {
	case "", CatalogSQL:
		return openSQLCatalog(o, getenv)
	case CatalogREST:
		var opts []rest.Option
		if wh, err := ParseWarehouse(o.Warehouse); err == nil && wh.Props != nil {
			// An s3:// URL with our parameters: its location, and the
			// parameters as IO properties (the catalog's own config may
			// override them).
			opts = append(opts, rest.WithWarehouseLocation(wh.Location), rest.WithAdditionalProps(wh.Props))
		} else if o.Warehouse != "" {
			opts = append(opts, rest.WithWarehouseLocation(o.Warehouse))
		}
		if tok := getenv("ICEBERG_REST_TOKEN"); tok != "" {
			opts = append(opts, rest.WithOAuthToken(tok))
		} else if cred := getenv("ICEBERG_REST_CREDENTIAL"); cred != "" {
			opts = append(opts, rest.WithCredential(cred))
		}
		c, err := rest.NewCatalog(ctx, catalogName, o.URI, opts...)
		if err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	default:
		return nil, nil, fmt.Errorf("catalog %q is not sql or rest", o.Catalog)
	}
}

// openSQLCatalog opens the SQL catalog on the database o.URI names.
func openSQLCatalog(o *Options, getenv func(string) string) (catalog.Catalog, func() error, error) {
	wh, err := ParseWarehouse(o.Warehouse)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(o.URI)
	if err != nil {
		return nil, nil, fmt.Errorf("catalog uri: %w", err)
	}
	var (
		db      *sql.DB
		dialect sqlcat.SupportedDialect
	)
	switch u.Scheme {
	case "sqlite":
		if u.Host != "" || !filepath.IsAbs(u.Path) {
			return nil, nil, errors.New(`a sqlite catalog uri is "sqlite:///abs/path/catalog.db", an absolute path`)
		}
		if err := os.MkdirAll(filepath.Dir(u.Path), 0o755); err != nil {
			return nil, nil, err
		}
		// WAL lets readers run beside a writer; an immediate transaction
		// takes the write lock up front, waiting up to the busy timeout
		// for another process's commit instead of failing on upgrade.
		dsn := "file:" + u.Path + "?_pragma=busy_timeout(30000)&_pragma=journal_mode(wal)&_txlock=immediate"
		if db, err = sql.Open("sqlite", dsn); err != nil {
			return nil, nil, err
		}
		dialect = sqlcat.SQLite
	case "postgres", "postgresql":
		if _, has := u.User.Password(); has {
			return nil, nil, errors.New("the catalog uri holds a password: set PGPASSWORD in the environment instead")
		}
		cfg, err := pgx.ParseConfig(o.URI)
		if err != nil {
			return nil, nil, err
		}
		// pgx falls back to the process environment; Getenv decides.
		cfg.Password = getenv("PGPASSWORD")
		db = stdlib.OpenDB(*cfg)
		dialect = sqlcat.Postgres
	default:
		return nil, nil, fmt.Errorf(`catalog uri scheme %q is not sqlite or postgres`, u.Scheme)
	}
	c, err := newSQLCatalog(db, dialect, wh)
	if err != nil {
		_ = db.Close()
		return nil, nil, err
	}
	return c, func() error { return errors.Join(c.Close(), db.Close()) }, nil
}

// newSQLCatalog opens the SQL catalog on db, creating its tables when
// they are missing. Its properties are the warehouse's location and IO
// properties: iceberg-go hands a catalog's properties to every table it
// creates or loads, so tables loaded later reach the files too. Two processes creating them at once on a new database
// can meet (see creationRace): the tables are there, or about to be,
// then, so it opens again, a few times.
func newSQLCatalog(db *sql.DB, dialect sqlcat.SupportedDialect, wh Warehouse) (*sqlcat.Catalog, error) {
	props := maps.Clone(wh.Props)
	if props == nil {
		props = iceberg.Properties{}
	}
	props["warehouse"] = wh.Location
	for try := 0; ; try++ {
		c, err := sqlcat.NewCatalog(catalogName, db, dialect, props)
		if err == nil || try == 4 || !creationRace(err) {
			return c, err
		}
		time.Sleep(time.Duration(50*(try+1)) * time.Millisecond)
	}
}

// creationRace reports whether err is what a process meets when another
// creates the catalog's tables at the same moment: PostgreSQL's race on its
// own catalog, or SQLite busy where its busy handler does not wait (a
// reader that must become a writer while another writes).
func creationRace(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505" || pgErr.Code == "42P07" || pgErr.Code == "42710"
	}
	var liteErr *sqlite.Error
	return errors.As(err, &liteErr) && liteErr.Code()&0xff == sqlite3.SQLITE_BUSY
}
