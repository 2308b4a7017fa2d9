package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// imageRef is a normalised image reference, in the spirit of the Docker
// reference grammar: "busybox" is "docker.io/library/busybox:latest",
// "quay.io/x/y@sha256:..." stays a digest reference.
type imageRef struct {
	repo   string // e.g. "docker.io/library/busybox"
	tag    string // "" for digest references
	digest string // "" for tag references
}

// String is the canonical form: repo:tag or repo@digest.
func (r imageRef) String() string {
	if r.digest != "" {
		return r.repo + "@" + r.digest
	}
	return r.repo + ":" + r.tag
}

// parseImageRef normalises ref. It rejects empty references, empty path
// components and upper-case repository names, as registries do.
func parseImageRef(ref string) (imageRef, error) {
	if ref == "" {
		return imageRef{}, newErr(ErrInvalidArgument, "image reference is empty")
	}
	name, digest, _ := strings.Cut(ref, "@")
	tag := ""
	if i, j := strings.LastIndexByte(name, '/'), strings.LastIndexByte(name, ':'); j > i {
		name, tag = name[:j], name[j+1:]
		if tag == "" {
			return imageRef{}, newErr(ErrInvalidArgument, "image reference %q: empty tag", ref)
		}
	}
	domain, path := "docker.io", name
	if i := strings.IndexByte(name, '/'); i >= 0 {
		if first := name[:i]; strings.ContainsAny(first, ".:") || first == "localhost" {
			domain, path = first, name[i+1:]
		}
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	for _, c := range strings.Split(path, "/") {
		if c == "" {
			return imageRef{}, newErr(ErrInvalidArgument, "image reference %q: empty path component", ref)
		}
	}
	if strings.ToLower(path) != path {
		return imageRef{}, newErr(ErrInvalidArgument, "image reference %q: repository name must be lowercase", ref)
	}
	r := imageRef{repo: domain + "/" + path}
	switch {
	case digest != "":
		if !strings.Contains(digest, ":") {
			return imageRef{}, newErr(ErrInvalidArgument, "image reference %q: malformed digest", ref)
		}
		r.digest = digest
	case tag != "":
		r.tag = tag
	default:
		r.tag = "latest"
	}
	return r, nil
}

// imageID is the simulated image ID for a normalised reference:
// "sha256:" + hex(sha256(canonical reference)). It is what PullImage
// returns as image_ref and what Image.id, Container.image_id and
// ContainerStatus.image_id carry.
func imageID(r imageRef) string {
	sum := sha256.Sum256([]byte(r.String()))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// repoDigest is the simulated "repo@sha256:..." manifest digest of a tag
// reference (distinct from the image ID, as in real registries).
func repoDigest(r imageRef) string {
	if r.digest != "" {
		return r.String()
	}
	sum := sha256.Sum256([]byte("manifest\x00" + r.String()))
	return r.repo + "@sha256:" + hex.EncodeToString(sum[:])
}

// isHex64 reports whether s is 64 lower-case hex digits.
func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
