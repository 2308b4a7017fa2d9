package replay

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/actorlet/actorlet/journal"
)

// ErrUnknownPod: a pod asked for is not in the journal.
var ErrUnknownPod = errors.New("pod not in journal")

// Journal replays the pods of j (see Fold) and reports them sorted by name
// and UID. refs selects pods by UID or by namespace/name (a name without a
// namespace is in "default"); none selects every pod. A ref that names no
// pod fails with ErrUnknownPod, one that names several with an error that
// lists their UIDs. Damaged pods (journal.CorruptError) are reported with
// their damage and not folded; damage of the file is always reported.
// Other errors reading the journal are returned as they are.
func Journal(ctx context.Context, j *journal.Journal, refs []string) (*Report, error) {
	streams, err := j.LoadAll(ctx)
	var ce *journal.CorruptError
	if err != nil && !errors.As(err, &ce) {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r := &Report{Path: j.Path()}
	damaged := map[string][]Damage{}
	if ce != nil {
		for _, p := range ce.Problems {
			d := Damage{PodUID: p.PodUID, Seq: p.Seq, Detail: p.Detail}
			if p.PodUID == "" {
				r.FileDamage = append(r.FileDamage, d)
				continue
			}
			damaged[p.PodUID] = append(damaged[p.PodUID], d)
		}
	}
	pods := make([]Pod, 0, len(streams)+len(damaged))
	for uid, s := range streams {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("replay %s: %w", j.Path(), err)
		}
		pods = append(pods, Fold(uid, s.Snapshot, s.Events))
	}
	for uid, ds := range damaged {
		pods = append(pods, Pod{UID: uid, From: "not folded: damaged", Damage: ds})
	}
	sort.Slice(pods, func(a, b int) bool {
		if pods[a].Name != pods[b].Name {
			return pods[a].Name < pods[b].Name
		}
		return pods[a].UID < pods[b].UID
	})
	if r.Pods, err = selectPods(pods, refs, j.Path()); err != nil {
		return nil, err
	}
	r.summarize()
	return r, nil
}

// selectPods keeps the pods refs name, in the order of pods.
func selectPods(pods []Pod, refs []string, path string) ([]Pod, error) {
	if len(refs) == 0 {
		return pods, nil
	}
	keep := map[string]bool{}
	for _, ref := range refs {
		var matches []string
		for _, p := range pods {
			if p.UID == ref {
				matches = []string{p.UID}
				break
			}
		}
		if matches == nil {
			name := ref
			if !strings.Contains(name, "/") {
				name = "default/" + name
			}
			for _, p := range pods {
				if p.Name == name {
					matches = append(matches, p.UID)
				}
			}
		}
		switch len(matches) {
		case 0:
			return nil, fmt.Errorf("no pod %q in journal %s (a damaged pod can only be named by its UID): %w", ref, path, ErrUnknownPod)
		case 1:
			keep[matches[0]] = true
		default:
			return nil, fmt.Errorf("%d pods are named %q in journal %s: give a UID (%s)", len(matches), ref, path, strings.Join(matches, ", "))
		}
	}
	var out []Pod
	for _, p := range pods {
		if keep[p.UID] {
			out = append(out, p)
		}
	}
	return out, nil
}
