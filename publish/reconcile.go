package publish

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/databrew/databrew-stage/sink"
	"github.com/databrew/databrew-stage/state"
)

// Reconcile resolves, for a run of the whole config, the publishes a
// crash interrupted: an undecided one is rolled back (what it staged is
// removed; its versions stay pending), a decided one is finished. A
// publish into another output (the config changed) is forgotten: its
// versions go to this one. Then every staged part the protocol left
// under the output and no publish owns is aborted, with what else killed
// processes left (Output.Sweep); other applications' are left alone. It
// runs before the crawl, so an output that cannot be used fails the run
// before its first request.
func (p *Publisher) Reconcile(ctx context.Context) error {
	pubs, err := p.Ledger.Publishing()
	if err != nil {
		return err
	}
	for _, pub := range pubs {
		pub, here := p.upgrade(ctx, pub)
		switch {
		case pub.Logical != "":
			// A shard's attempt cannot be in a whole config's state.
			err = p.Ledger.AbortPublish(pub.RunID)
		case !here:
			p.log().Warn("a publish into another output was interrupted; its items stay pending for this output",
				"run_id", pub.RunID, "was", strings.TrimSpace(pub.Target+" "+pub.Dir))
			err = p.Ledger.AbortPublish(pub.RunID)
		case !pub.Decided:
			p.log().Warn("publish interrupted before it was decided; its items stay pending", "run_id", pub.RunID)
			err = p.rollBack(ctx, pub)
		default:
			p.log().Warn("completing a publish interrupted after it was decided", "run_id", pub.RunID, "run", p.Out.Where(pub.Dir))
			err = p.finish(ctx, pub, nil)
		}
		if err != nil {
			return err
		}
	}
	return p.sweep(ctx, true)
}

// sweep aborts the staged parts the protocol left under the output, and
// what Output.Sweep finds (see Reconcile).
func (p *Publisher) sweep(ctx context.Context, exclusive bool) error {
	n := 0
	if exclusive {
		for _, prefix := range ownPrefixes {
			k, err := p.Out.Storage.AbortStaged(ctx, prefix, ownStaged(""))
			n += k
			if err != nil {
				return err
			}
		}
	}
	if p.Out.Sweep != nil {
		k, err := p.Out.Sweep(ctx, p.now(), exclusive)
		n += k
		if err != nil {
			return err
		}
	}
	if n > 0 {
		p.log().Warn("aborted staged parts no publish owns under the output", "parts", n)
	}
	if p.Out.Tidy != nil {
		return p.Out.Tidy()
	}
	return nil
}

// upgrade returns pub in the shape of Protocol 2, and whether it is a
// publish into this output. A record of an earlier release keeps its
// meaning: a local folder's was decided once its run folder appeared
// (its files and _verdict.json came with it); an object store's once it
// held its manifest; a shard's attempt names its parts by attempt as
// today, on S3 (a local folder's attempt staged in a folder of its own,
// which Settle looks at).
func (p *Publisher) upgrade(ctx context.Context, pub state.Publication) (state.Publication, bool) {
	if pub.Protocol >= 2 {
		return pub, pub.Target == p.Out.ID
	}
	if p.Out.Recorded == nil {
		return pub, false
	}
	key, ok := p.Out.Recorded(pub.Dir)
	if !ok {
		return pub, false
	}
	key = strings.TrimSuffix(key, "/")
	up := pub
	up.Protocol, up.Staging, up.Uploads, up.Target = 2, "", nil, p.Out.ID
	var m sink.Manifest
	if pub.HasManifest() {
		if err := json.Unmarshal(pub.Manifest, &m); err != nil {
			return pub, false
		}
	}
	switch {
	case pub.Logical != "" && strings.HasPrefix(key, ShardsFolder+"/"):
		// A local folder's attempt, staged in its own folder: Settle
		// looks there.
		up.Dir = key
		return up, true
	case pub.Logical != "":
		// dt=D/run=ID/shard=I-of-N/<attempt>- on S3.
		shardDir := path.Dir(key + "x")
		up.Dir, up.Shard = path.Dir(shardDir), strings.TrimPrefix(path.Base(shardDir), "shard=")
		for _, f := range m.Files {
			up.Parts = append(up.Parts, state.Part{Key: shardDir + "/" + f.Name, Token: pub.Uploads[f.Name], Size: f.Bytes})
		}
		return up, true
	case pub.Staging != "" || pub.Target == "":
		// A local folder: decided once its run folder appeared, which
		// held its parts and _verdict.json.
		keys, err := p.Out.Storage.List(ctx, key+"/")
		up.Dir, up.Decided = key, err == nil && len(keys) > 0
		return up, up.Decided || err == nil
	default:
		up.Dir, up.Decided = key, pub.HasManifest()
		for _, f := range m.Files {
			up.Parts = append(up.Parts, state.Part{Key: key + "/" + f.Name, Token: pub.Uploads[f.Name], Size: f.Bytes})
		}
		return up, pub.Target == p.Out.Name || pub.Target == p.Out.ID
	}
}
