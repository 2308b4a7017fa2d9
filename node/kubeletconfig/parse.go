package kubeletconfig

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// Parsed is a node's configuration from its command line, config file and
// drop-ins.
type Parsed struct {
	Node   *NodeFlags
	Config *kubeletconfigv1beta1.KubeletConfiguration
	Global *GlobalFlags
	// FlagSet is the command line's flag set, for Changed and for the
	// caller's own flags.
	FlagSet *pflag.FlagSet
	// Warnings are to be logged once at start: the lenient decoding of the
	// config file, drop-in files skipped for their name.
	Warnings []error
}

// ExtraFlags defines the caller's own flags (actorlet's, beside the
// kubelet's) on a flag set.
type ExtraFlags func(*pflag.FlagSet)

// Parse reads a kubelet command line as the kubelet v1.37 does, with the
// profile's defaults:
//
//  1. every flag is parsed over the defaults (NodeFlags, KubeletConfiguration
//     flags, global flags, and extra, the caller's);
//  2. with --config, the configuration is read from the file instead (see
//     Load), with --config-dir the drop-ins are merged over it (MergeDropIns);
//  3. then the command line is parsed again over that configuration, so a
//     flag given wins over the file; feature gates from the file that no flag
//     sets are kept.
//
// Parse stops after step 1 on --help or --version (the caller answers them).
// It does not validate: see Validate and ValidateNodeFlags. Non-flag
// arguments are an error, as for the kubelet. The notices of deprecated flags
// that are used go to out (nil: nowhere), once, as the kubelet prints them;
// under RunProfile only those of the node flags deprecated for removal, since
// `actorlet run` keeps flags for every field.
func Parse(args []string, p Profile, extra ExtraFlags, out io.Writer) (*Parsed, error) {
	res := &Parsed{Node: NewNodeFlags(), Config: Defaults(p), Global: &GlobalFlags{}}
	if p == RunProfile {
		res.Node.RootDirectory, res.Node.CertDirectory = RunRootDirectory, RunCertDirectory
	}
	if out == nil {
		out = io.Discard
	}
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetOutput(out)
	AddFlags(fs, res.Node, res.Config, res.Global)
	if p == RunProfile {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Deprecated == ConfigFlagDeprecation {
				f.Deprecated = ""
			}
		})
	}
	if extra != nil {
		extra(fs)
	}
	res.FlagSet = fs
	if err := fs.Parse(args); err != nil {
		return res, fmt.Errorf("failed to parse kubelet flag: %w", err)
	}
	if cmds := fs.Args(); len(cmds) > 0 {
		return res, fmt.Errorf("unknown command %+s", cmds[0])
	}
	if res.Global.Help || res.Global.Version != "" && res.Global.Version != "false" {
		return res, nil
	}
	if res.Node.ConfigFile == "" && res.Node.ConfigDir == "" {
		return res, nil
	}
	kc := Defaults(p)
	if res.Node.ConfigFile != "" {
		loaded, warning, err := Load(res.Node.ConfigFile, p)
		if err != nil {
			return res, fmt.Errorf("failed to load kubelet config file, path: %s, error: %w", res.Node.ConfigFile, err)
		}
		if warning != nil {
			res.Warnings = append(res.Warnings, warning)
		}
		kc = loaded
	}
	if res.Node.ConfigDir != "" {
		merged, skipped, err := MergeDropIns(kc, res.Node.ConfigDir, p)
		if err != nil {
			return res, fmt.Errorf("failed to merge kubelet configs: %w", err)
		}
		for _, f := range skipped {
			res.Warnings = append(res.Warnings, fmt.Errorf("skipped file in drop-in directory %s: it does not have the .conf extension", f))
		}
		kc = merged
	}
	if err := flagPrecedence(kc, args, fs); err != nil {
		return res, fmt.Errorf("failed to precedence kubeletConfigFlag: %w", err)
	}
	res.Config = kc
	return res, nil
}

// flagPrecedence parses args again with the KubeletConfiguration flags bound
// to kc and every other flag of like (the first parse's set) a no-op, so
// that values that accumulate are not set twice.
func flagPrecedence(kc *kubeletconfigv1beta1.KubeletConfiguration, args []string, like *pflag.FlagSet) error {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	original := kc.FeatureGates
	AddConfigFlags(fs, kc)
	like.VisitAll(func(f *pflag.Flag) {
		if fs.Lookup(f.Name) != nil {
			return
		}
		fs.VarP(cliflag.NoOp{}, f.Name, f.Shorthand, f.Usage)
		fs.Lookup(f.Name).NoOptDefVal = f.NoOptDefVal
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	for k, v := range original {
		if _, ok := kc.FeatureGates[k]; !ok {
			kc.FeatureGates[k] = v
		}
	}
	return nil
}

// RunProfile's directories (the kubelet's are DefaultRootDirectory and
// DefaultCertDirectory).
const (
	RunRootDirectory = "/var/lib/actorlet"
	// RunCertDirectory is <root-dir>/pki (set from the root dir when the
	// command line is resolved); this is its value for the default root.
	RunCertDirectory = "/var/lib/actorlet/pki"
)

// ErrInvalid marks a configuration that fails validation.
var ErrInvalid = errors.New("invalid kubelet configuration")
