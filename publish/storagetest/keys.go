package storagetest

import (
	"errors"
	"slices"
	"strings"

	"github.com/databrew/databrew-stage/publish"
)

// badKeys are not keys: each would escape the root, or name a folder, or
// be read differently by another store.
var badKeys = []string{"", "/a", "a/", "a//b", "./a", "a/./b", ".", "..", "../a", "a/../b", "a/..", "../../etc/passwd",
	"a\x00b", "a\nb", "a\x7fb", "\xff"}

// badPrefixes are not prefixes of keys.
var badPrefixes = []string{"/", "/a", "../", "..", ".", "a//", "a/../", "a/..", "a/.", "../a", "\x00", "a\nb"}

func badKeysAreRefused(f *fixture) {
	ctx := f.ctx()
	refused := func(what, key string, err error) {
		f.t.Helper()
		if !errors.Is(err, publish.ErrBadKey) {
			f.t.Errorf("%s(%q) = %v; want an error wrapping ErrBadKey", what, key, err)
		}
	}
	for _, k := range badKeys {
		w, err := f.s.StagePart(ctx, k)
		if w != nil {
			_ = w.Abort()
		}
		refused("StagePart", k, err)
		refused("CompletePart", k, f.s.CompletePart(ctx, publish.Part{Key: k, Token: "t", Size: 1}))
		refused("CheckPart", k, f.s.CheckPart(ctx, publish.Part{Key: k, Token: "t", Size: 1}))
		_, err = f.s.PutIfAbsent(ctx, k, []byte("x"))
		refused("PutIfAbsent", k, err)
		refused("Put", k, f.s.Put(ctx, k, []byte("x")))
		_, err = f.s.Read(ctx, k)
		refused("Read", k, err)
		_, _, err = f.s.Stat(ctx, k)
		refused("Stat", k, err)
	}
	for _, p := range badPrefixes {
		_, err := f.s.List(ctx, p)
		refused("List", p, err)
		_, err = f.s.ListStaged(ctx, p)
		refused("ListStaged", p, err)
		_, err = f.s.AbortStaged(ctx, p, anyPart)
		refused("AbortStaged", p, err)
		_, err = f.s.DeletePrefix(ctx, p)
		refused("DeletePrefix", p, err)
	}
	part := f.stage("ok/part", []byte("x"))
	refused("CompleteFolder", "../", f.s.CompleteFolder(ctx, "../", []publish.Part{part}))
	refused("CompleteFolder", "ok//", f.s.CompleteFolder(ctx, "ok//", []publish.Part{{Key: "ok//part", Token: part.Token, Size: 1}}))
	if f.t.Failed() {
		return
	}
	// Nothing was written: the root holds only the part staged above.
	if f.caps.HidesParts {
		f.expectList("")
		f.expectStaged("", "ok/part")
	} else {
		f.expectList("", "ok/part")
	}
}

// unusualKeys are keys with characters some stores escape or some
// clients encode: each must round-trip as itself.
var unusualKeys = []string{
	"dt=2024-05-01/run=20240501T000000Z-1a2b/part-00000.parquet",
	"with space/a+b=c,d;e@f&g",
	"ünïcødé/日本語.json",
	"percent%41/hash#x/question?y",
	".hidden/_SUCCESS",
	"..dots/...",
	"back\\slash",
}

// refusableKeys are keys a backend may refuse (with ErrBadKey, from
// every keyed method) because its store would not hold them as they
// are; those it takes must round-trip as themselves.
var refusableKeys = []string{
	"__0x41__/escaped-looking",
}

func unusualKeysRoundTrip(f *fixture) {
	keys := slices.Clone(unusualKeys)
	for _, k := range refusableKeys {
		if refusedEverywhere(f, k) {
			f.t.Logf("the backend refuses %q", k)
			continue
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		f.put("put/"+k, []byte(k))
		f.complete(f.stage("part/"+k, []byte(k)))
	}
	var want []string
	for _, dir := range []string{"part/", "put/"} {
		for _, k := range keys {
			want = append(want, dir+k)
		}
	}
	slices.Sort(want)
	f.expectList("", want...)
	for _, k := range want {
		_, written, _ := strings.Cut(k, "/")
		f.expectObject(k, []byte(written))
	}
	f.expectList("put/percent%41/", "put/percent%41/hash#x/question?y")
	f.expectList("part/ünïcødé/", "part/ünïcødé/日本語.json")
}

// refusedEverywhere reports whether every keyed method refuses key with
// ErrBadKey; it fails the test when some do and some do not.
func refusedEverywhere(f *fixture, key string) bool {
	f.t.Helper()
	ctx := f.ctx()
	bad := func(err error) bool { return errors.Is(err, publish.ErrBadKey) }
	putErr := f.s.Put(ctx, "put/"+key, []byte(key))
	if !bad(putErr) {
		if putErr != nil {
			f.t.Fatalf("Put(%q): %v", key, putErr)
		}
		_, _ = f.s.DeletePrefix(ctx, "put/"+key)
		return false
	}
	w, err := f.s.StagePart(ctx, "part/"+key)
	if w != nil {
		_ = w.Abort()
	}
	_, perr := f.s.PutIfAbsent(ctx, key, nil)
	_, rerr := f.s.Read(ctx, key)
	_, _, serr := f.s.Stat(ctx, key)
	_, lerr := f.s.List(ctx, key)
	if !bad(err) || !bad(perr) || !bad(rerr) || !bad(serr) || !bad(lerr) {
		f.t.Fatalf("Put refuses %q, yet StagePart = %v, PutIfAbsent = %v, Read = %v, Stat = %v, List = %v; want each to refuse it",
			key, err, perr, rerr, serr, lerr)
	}
	return true
}
