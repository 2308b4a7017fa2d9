package imagegc

import (
	"cmp"
	"slices"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// record is what the Manager remembers of one image ID.
type record struct {
	firstSeen time.Time
	// lastUsed is the last pass that saw a container refer to the image;
	// zero if none did.
	lastUsed time.Time
}

// idle is the time since the image was last used, or since first seen if
// it never was.
func (r record) idle(now time.Time) time.Duration {
	return now.Sub(latest(r.firstSeen, r.lastUsed))
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// candidate is an image that may be removed: present, unused, unpinned and
// not a sandbox image.
type candidate struct {
	img *runtimeapi.Image
	rec record
}

// nameSet holds image references: IDs, tags and digest references. IDs are
// stored with and without their "sha256:" prefix.
type nameSet map[string]struct{}

func (s nameSet) add(ref string) {
	if ref == "" {
		return
	}
	s[ref] = struct{}{}
	if hex, ok := strings.CutPrefix(ref, "sha256:"); ok {
		s[hex] = struct{}{}
	}
}

// matches reports whether img is known to s by its ID, a tag or a digest.
func (s nameSet) matches(img *runtimeapi.Image) bool {
	if len(s) == 0 {
		return false
	}
	names := slices.Concat([]string{img.GetId(), strings.TrimPrefix(img.GetId(), "sha256:")},
		img.GetRepoTags(), img.GetRepoDigests())
	return slices.ContainsFunc(names, func(n string) bool { _, ok := s[n]; return ok })
}

// inUse returns the references of the images containers run from.
func inUse(containers []*runtimeapi.Container) nameSet {
	s := nameSet{}
	for _, c := range containers {
		s.add(c.GetImageId())
		s.add(c.GetImageRef())
		s.add(c.GetImage().GetImage())
	}
	return s
}

// update brings records up to date with the images present at now and the
// references in use, and returns the removal candidates in eviction order:
// least recently used first (never used before used), then first seen
// earliest, then by ID.
func update(records map[string]*record, images []*runtimeapi.Image, used, sandbox nameSet, now time.Time) []candidate {
	present := make(map[string]bool, len(images))
	var out []candidate
	for _, img := range images {
		id := img.GetId()
		if id == "" {
			continue
		}
		present[id] = true
		r, ok := records[id]
		if !ok {
			r = &record{firstSeen: now}
			records[id] = r
		}
		if used.matches(img) {
			r.lastUsed = now
			continue
		}
		if img.GetPinned() || sandbox.matches(img) {
			continue
		}
		out = append(out, candidate{img: img, rec: *r})
	}
	for id := range records {
		if !present[id] {
			delete(records, id)
		}
	}
	slices.SortFunc(out, func(a, b candidate) int {
		return cmp.Or(a.rec.lastUsed.Compare(b.rec.lastUsed),
			a.rec.firstSeen.Compare(b.rec.firstSeen),
			strings.Compare(a.img.GetId(), b.img.GetId()))
	})
	return out
}
