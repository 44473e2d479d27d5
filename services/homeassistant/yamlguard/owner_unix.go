//go:build unix

package yamlguard

import (
	"io/fs"
	"os"
	"syscall"
)

// links is the file's hard link count.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// keepOwner gives fh the owner of the file it replaces, where allowed.
func keepOwner(fh *os.File, fi fs.FileInfo) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		_ = fh.Chown(int(st.Uid), int(st.Gid))
	}
}
