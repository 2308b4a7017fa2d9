package imagegc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrFreeDiskSpace is wrapped by the error of a pass that could not bring
// usage down to the low threshold.
var ErrFreeDiskSpace = errors.New("failed to free enough image disk space")

// Reason says why an image was removed.
type Reason string

const (
	// ReasonAge: unused for longer than Policy.MaxAge.
	ReasonAge Reason = "age"
	// ReasonSpace: removed to bring usage down to the low threshold.
	ReasonSpace Reason = "space"
)

// Removal is one image removed by a pass.
type Removal struct {
	ID        string
	RepoTags  []string
	Size      uint64
	Reason    Reason
	FirstSeen time.Time
	// LastUsed is zero for an image never seen in use.
	LastUsed time.Time
}

// Result is what one pass did.
type Result struct {
	// Removed are the images removed, in order.
	Removed []Removal
	// BytesFreed is the sum of the removed images' sizes.
	BytesFreed uint64
	// UsedBytes and CapacityBytes measure the image filesystem after the
	// max-age removals; UsagePercent is their ratio, rounded down. All zero
	// if the measure failed.
	UsedBytes, CapacityBytes uint64
	UsagePercent             int
	// BytesToFree is what usage at or above the high threshold asked to
	// free (0 below it).
	BytesToFree uint64
}

// GarbageCollect runs one pass: it lists images and containers to update the
// first-seen and last-used times, removes unused images idle for longer than
// MaxAge, then, if image filesystem usage is at or above the high threshold,
// removes unused images at least MinAge old, least recently used first, until
// usage is at the low threshold.
//
// The Result holds what was removed even when the error is not nil. The error
// joins every failed removal (the pass goes on past them), a failed listing
// or measure (the pass stops), and an error wrapping ErrFreeDiskSpace when
// too few bytes could be freed. FreeDiskSpaceFailed and ImageGCFailed events
// are emitted accordingly, except when ctx is done.
func (m *Manager) GarbageCollect(ctx context.Context) (Result, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var res Result
	shortfall, removeErrs, err := m.collect(ctx, &res)
	if ctx.Err() != nil {
		return res, errors.Join(shortfall, removeErrs, err, ctx.Err())
	}
	if shortfall != nil {
		m.event(FreeDiskSpaceFailed, shortfall.Error())
	}
	if failed := errors.Join(removeErrs, err); failed != nil {
		m.event(ImageGCFailed, failed.Error())
	}
	return res, errors.Join(shortfall, removeErrs, err)
}

// collect does the pass's work into res. It returns the shortfall error, the
// joined removal errors, and the error that stopped the pass.
func (m *Manager) collect(ctx context.Context, res *Result) (shortfall, removeErrs, err error) {
	now := m.clock.Now()
	images, err := m.rt.ListImages(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("list images: %w", err)
	}
	containers, err := m.rt.ListContainers(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("list containers: %w", err)
	}
	candidates := update(m.records, images, inUse(containers), m.sandbox, now)

	var errs []error
	if m.policy.MaxAge > 0 {
		kept := candidates[:0:0]
		for _, c := range candidates {
			if c.rec.idle(now) <= m.policy.MaxAge {
				kept = append(kept, c)
				continue
			}
			if err := m.remove(ctx, c, ReasonAge, res); err != nil {
				errs = append(errs, err)
				if ctx.Err() != nil {
					return nil, errors.Join(errs...), nil
				}
			}
		}
		candidates = kept
	}

	used, capacity, err := m.usage(ctx)
	if err != nil {
		return nil, errors.Join(errs...), err
	}
	res.UsedBytes, res.CapacityBytes = used, capacity
	res.UsagePercent = int(used * 100 / capacity)
	if res.UsagePercent < m.policy.HighThresholdPercent {
		return nil, errors.Join(errs...), nil
	}
	target := capacity * uint64(m.policy.LowThresholdPercent) / 100
	res.BytesToFree = used - min(target, used)
	m.log.Info("image filesystem usage over the high threshold",
		zap.Int("usagePercent", res.UsagePercent), zap.Int("highThresholdPercent", m.policy.HighThresholdPercent),
		zap.Uint64("bytesToFree", res.BytesToFree))

	var freed uint64
	for _, c := range candidates {
		if freed >= res.BytesToFree {
			break
		}
		if now.Sub(c.rec.firstSeen) < m.policy.MinAge {
			continue
		}
		if err := m.remove(ctx, c, ReasonSpace, res); err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				return nil, errors.Join(errs...), nil
			}
			continue
		}
		freed += c.img.GetSize()
	}
	if freed < res.BytesToFree {
		shortfall = fmt.Errorf("%w: attempted to free %d bytes, but only freed %d bytes of eligible images",
			ErrFreeDiskSpace, res.BytesToFree, freed)
	}
	return shortfall, errors.Join(errs...), nil
}

// usage measures the first image filesystem the runtime reports.
func (m *Manager) usage(ctx context.Context) (used, capacity uint64, err error) {
	info, err := m.rt.ImageFsInfo(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("image filesystem info: %w", err)
	}
	fss := info.GetImageFilesystems()
	if len(fss) == 0 {
		return 0, 0, errors.New("image filesystem info: runtime reported no image filesystem")
	}
	fs := fss[0]
	mp := fs.GetFsId().GetMountpoint()
	if mp == "" {
		return 0, 0, errors.New("image filesystem info: runtime reported no mountpoint")
	}
	capacity, err = m.capacity(ctx, mp)
	if err != nil {
		return 0, 0, fmt.Errorf("capacity of image filesystem %q: %w", mp, err)
	}
	if capacity == 0 {
		return 0, 0, fmt.Errorf("capacity of image filesystem %q is 0", mp)
	}
	return fs.GetUsedBytes().GetValue(), capacity, nil
}

// remove removes c's image, records it in res and reports it, or returns an
// error naming the image.
func (m *Manager) remove(ctx context.Context, c candidate, reason Reason, res *Result) error {
	id := c.img.GetId()
	log := m.log.With(zap.String("imageID", id), zap.Strings("repoTags", c.img.GetRepoTags()),
		zap.Uint64("size", c.img.GetSize()), zap.String("reason", string(reason)),
		zap.Time("firstSeen", c.rec.firstSeen), zap.Time("lastUsed", c.rec.lastUsed))
	if err := m.rt.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: id}); err != nil {
		log.Warn("image removal failed", zap.Error(err))
		return fmt.Errorf("remove image %q: %w", id, err)
	}
	delete(m.records, id)
	r := Removal{ID: id, RepoTags: c.img.GetRepoTags(), Size: c.img.GetSize(), Reason: reason,
		FirstSeen: c.rec.firstSeen, LastUsed: c.rec.lastUsed}
	res.Removed = append(res.Removed, r)
	res.BytesFreed += r.Size
	log.Info("image removed")
	if m.onRemove != nil {
		m.onRemove(r)
	}
	return nil
}

func (m *Manager) event(reason, msg string) {
	if m.events != nil {
		m.events(EventTypeWarning, reason, msg)
	}
}
