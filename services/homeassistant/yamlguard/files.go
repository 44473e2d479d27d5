package yamlguard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/internal/toolerr"
)

// File is one of the four files the YAML tools reach. There is no other
// way in: no tool takes a path, and Dir opens nothing but these names.
type File string

// The files, by their names in Home Assistant's configuration directory.
const (
	Automations   File = "automations.yaml"
	Scripts       File = "scripts.yaml"
	Scenes        File = "scenes.yaml"
	Configuration File = "configuration.yaml"
)

// Files are the readable files in the order find_source searches them.
var Files = []File{Automations, Scripts, Scenes, Configuration}

func (f File) known() bool {
	switch f {
	case Automations, Scripts, Scenes, Configuration:
		return true
	}
	return false
}

// MaxFileBytes bounds a file the tools read: HA's own files of a large
// home stay well under it.
const MaxFileBytes = 2 << 20

// Dir is Home Assistant's configuration directory, opened as an os.Root:
// no name can resolve outside it, and each file must be a regular file
// with one link, not a symlink (even one that stays inside).
type Dir struct {
	root *os.Root
}

// OpenDir opens the configuration directory at path.
func OpenDir(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r}, nil
}

// Close releases the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Snapshot is a file's content at one moment and what it takes to write
// it back the same way.
type Snapshot struct {
	File    File
	Content []byte
	SHA256  string
	mode    fs.FileMode
	info    fs.FileInfo
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Read reads f, refusing anything but the expected regular file.
func (d *Dir) Read(f File) (Snapshot, error) {
	if !f.known() {
		return Snapshot{}, toolerr.New(toolerr.Forbidden, "only automations.yaml, scripts.yaml, scenes.yaml and configuration.yaml are reachable")
	}
	name := string(f)
	fi, err := d.root.Lstat(name)
	if err != nil {
		return Snapshot{}, fileError(f, err)
	}
	if err := expectRegular(f, fi); err != nil {
		return Snapshot{}, err
	}
	if fi.Size() > MaxFileBytes {
		return Snapshot{}, toolerr.New(toolerr.TooLarge, "%s is larger than %d bytes; the YAML tools do not handle it", f, MaxFileBytes)
	}
	// O_NOFOLLOW and O_NONBLOCK: a file swapped for a symlink or a FIFO
	// after the Lstat fails instead of being followed or blocking.
	fh, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return Snapshot{}, fileError(f, err)
	}
	defer fh.Close()
	got, err := fh.Stat()
	if err != nil {
		return Snapshot{}, fileError(f, err)
	}
	if !os.SameFile(fi, got) {
		return Snapshot{}, toolerr.New(toolerr.Forbidden, "%s changed while it was opened; try again", f)
	}
	b, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return Snapshot{}, fileError(f, err)
	}
	if len(b) > MaxFileBytes {
		return Snapshot{}, toolerr.New(toolerr.TooLarge, "%s is larger than %d bytes; the YAML tools do not handle it", f, MaxFileBytes)
	}
	return Snapshot{File: f, Content: b, SHA256: digest(b), mode: fi.Mode().Perm(), info: fi}, nil
}

// expectRegular refuses a symlink (wherever it points), a directory, a
// device or a file with further hard links (which could be secrets.yaml
// under another name).
func expectRegular(f File, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return toolerr.New(toolerr.Forbidden, "%s is a symbolic link; the YAML tools only use the regular file itself", f)
	case !fi.Mode().IsRegular():
		return toolerr.New(toolerr.Forbidden, "%s is not a regular file", f)
	case links(fi) > 1:
		return toolerr.New(toolerr.Forbidden, "%s has further hard links; the YAML tools only use a file with one name", f)
	}
	return nil
}

func fileError(f File, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolerr.New(toolerr.NotFound, "%s does not exist in Home Assistant's configuration directory", f)
	case errors.Is(err, syscall.ELOOP):
		return toolerr.New(toolerr.Forbidden, "%s is a symbolic link; the YAML tools only use the regular file itself", f)
	case errors.Is(err, syscall.EROFS):
		return toolerr.New(toolerr.Forbidden, "the configuration directory is mounted read-only: set HA_YAML_WRITE=true in secrets/homeassistant.env and re-run install.sh")
	case errors.Is(err, fs.ErrPermission):
		return toolerr.New(toolerr.Forbidden, "the service may not access %s (file or directory permissions)", f)
	}
	// Any other error names no path: os.Root errors carry the name only.
	return toolerr.Wrap(toolerr.Internal, err, "cannot access %s", f)
}

// Replace writes content as s.File atomically: a temporary file in the
// same directory with s's mode (and owner, where the service may set it),
// synced, then renamed over the file. The caller has checked that the file
// is still s.
func (d *Dir) Replace(s Snapshot, content []byte) error {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := "." + string(s.File) + ".toolgate-" + hex.EncodeToString(rnd[:]) + ".tmp"
	fh, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, s.mode)
	if err != nil {
		return fileError(s.File, err)
	}
	done := false
	defer func() {
		if !done {
			_ = fh.Close()
			_ = d.root.Remove(tmp)
		}
	}()
	if _, err := fh.Write(content); err != nil {
		return fileError(s.File, err)
	}
	// The umask may have narrowed the mode; the owner is kept when the
	// service may (as root, or the same user), else it becomes the service's.
	if err := fh.Chmod(s.mode); err != nil {
		return fileError(s.File, err)
	}
	keepOwner(fh, s.info)
	if err := fh.Sync(); err != nil {
		return fileError(s.File, err)
	}
	if err := fh.Close(); err != nil {
		return fileError(s.File, err)
	}
	if err := d.root.Rename(tmp, string(s.File)); err != nil {
		_ = d.root.Remove(tmp)
		done = true
		return fileError(s.File, err)
	}
	done = true
	if dir, err := d.root.Open("."); err == nil {
		_ = dir.Sync()
		_ = dir.Close()
	}
	return nil
}

// Backups keeps copies of files before the service changes them, in a
// directory of its own (never inside HA's configuration directory, whose
// backups HA would not expect).
type Backups struct {
	Dir  string
	Keep int
	Now  func() time.Time
}

// Save writes s's content as <file>.<UTC time>.<digest>.bak and drops the
// oldest copies of that file beyond Keep. It returns the backup's name.
func (b Backups) Save(s Snapshot) (string, error) {
	if err := os.MkdirAll(b.Dir, 0o700); err != nil {
		return "", fmt.Errorf("backup directory: %w", err)
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	name := fmt.Sprintf("%s.%s.%s.bak", s.File, now().UTC().Format("20060102T150405.000000000Z"), s.SHA256[:12])
	fh, err := os.OpenFile(filepath.Join(b.Dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	if _, err := fh.Write(s.Content); err != nil {
		fh.Close()
		return "", fmt.Errorf("backup: %w", err)
	}
	if err := fh.Sync(); err != nil {
		fh.Close()
		return "", fmt.Errorf("backup: %w", err)
	}
	if err := fh.Close(); err != nil {
		return "", fmt.Errorf("backup: %w", err)
	}
	b.prune(s.File)
	return name, nil
}

// prune removes the oldest backups of f beyond Keep; names sort by time.
func (b Backups) prune(f File) {
	if b.Keep <= 0 {
		return
	}
	entries, err := os.ReadDir(b.Dir)
	if err != nil {
		return
	}
	var mine []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), string(f)+".") && strings.HasSuffix(e.Name(), ".bak") {
			mine = append(mine, e.Name())
		}
	}
	sort.Strings(mine)
	for len(mine) > b.Keep {
		_ = os.Remove(filepath.Join(b.Dir, mine[0]))
		mine = mine[1:]
	}
}
