package sim

import (
	"maps"
	"slices"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// simImageSize is the size every simulated image reports.
const simImageSize = 1 << 20

// image is one pulled image. Its fields never change after the pull.
type image struct {
	id          string
	repoTags    []string
	repoDigests []string
	annotations map[string]string
}

// imageStore indexes images by ID and by every name (tag and digest
// references) they are known by. Guarded by the Runtime's mutex.
type imageStore struct {
	byID   map[string]*image
	byName map[string]*image
}

func newImageStore() *imageStore {
	return &imageStore{byID: make(map[string]*image), byName: make(map[string]*image)}
}

// resolve finds an image by ID ("sha256:<hex>" or bare hex), by any
// reference that normalises to one of its names, or by exact name.
func (s *imageStore) resolve(ref string) *image {
	if img, ok := s.byID[ref]; ok {
		return img
	}
	if isHex64(ref) {
		if img, ok := s.byID["sha256:"+ref]; ok {
			return img
		}
	}
	if img, ok := s.byName[ref]; ok {
		return img
	}
	if r, err := parseImageRef(ref); err == nil {
		return s.byName[r.String()]
	}
	return nil
}

// add records a pull of r and returns the image (existing or new).
func (s *imageStore) add(r imageRef, annotations map[string]string) *image {
	id := imageID(r)
	if img, ok := s.byID[id]; ok {
		return img
	}
	img := &image{id: id, repoDigests: []string{repoDigest(r)}, annotations: maps.Clone(annotations)}
	if r.tag != "" {
		img.repoTags = []string{r.String()}
	}
	s.byID[id] = img
	for _, n := range img.names() {
		s.byName[n] = img
	}
	return img
}

// remove forgets img under all its names.
func (s *imageStore) remove(img *image) {
	delete(s.byID, img.id)
	for _, n := range img.names() {
		if s.byName[n] == img {
			delete(s.byName, n)
		}
	}
}

// sorted returns all images ordered by ID.
func (s *imageStore) sorted() []*image {
	out := slices.Collect(maps.Values(s.byID))
	slices.SortFunc(out, func(a, b *image) int { return strings.Compare(a.id, b.id) })
	return out
}

func (img *image) names() []string {
	return slices.Concat(img.repoTags, img.repoDigests)
}

// displayName is the image name used in ContainerStatus.image: the first
// tag, else the first digest reference (containerd does the same).
func (img *image) displayName() string {
	if len(img.repoTags) > 0 {
		return img.repoTags[0]
	}
	return img.repoDigests[0]
}

func (img *image) toCRI() *runtimeapi.Image {
	return &runtimeapi.Image{
		Id:          img.id,
		RepoTags:    slices.Clone(img.repoTags),
		RepoDigests: slices.Clone(img.repoDigests),
		Size:        simImageSize,
		Spec:        &runtimeapi.ImageSpec{Image: img.id, Annotations: maps.Clone(img.annotations)},
	}
}
