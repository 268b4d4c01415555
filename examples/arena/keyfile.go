package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ghostwire/ghostwire/transport/udp"
)

// A key file holds the private key that the servers and whoever makes
// connect tokens share: exactly udp.KeySize (32) raw bytes, no encoding,
// no newline. Make one with
//
//	head -c 32 /dev/urandom > arena.key
//
// or with the arena's -genkey FILE. Whoever can read it can mint tokens
// for every server that uses it: keep it private (mode 0600).

// readKeyFile reads a key file. It errors naming the file when it cannot
// be read, does not hold exactly 32 bytes, or holds only zeros.
func readKeyFile(path string) ([udp.KeySize]byte, error) {
	var key [udp.KeySize]byte
	f, err := os.Open(path)
	if err != nil {
		return key, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	// One byte more than a key shows a file that is too long without
	// reading a large one whole.
	b, err := io.ReadAll(io.LimitReader(f, udp.KeySize+1))
	if err != nil {
		return key, fmt.Errorf("key file %s: %w", path, err)
	}
	if len(b) != udp.KeySize {
		n := fmt.Sprint(len(b))
		if len(b) > udp.KeySize {
			n = "more than 32"
		}
		return key, fmt.Errorf("key file %s holds %s bytes; it must hold exactly %d raw bytes (make one with: head -c 32 /dev/urandom > %s, or -genkey %s)",
			path, n, udp.KeySize, path, path)
	}
	copy(key[:], b)
	if key == ([udp.KeySize]byte{}) {
		return key, fmt.Errorf("key file %s holds only zero bytes; make a random key (head -c 32 /dev/urandom > %s)", path, path)
	}
	return key, nil
}

// writeKeyFile writes a fresh random key to a new file with mode 0600. It
// refuses to overwrite an existing file: that would lock out every server
// and token backend still using the old key.
func writeKeyFile(path string) error {
	var key [udp.KeySize]byte
	if _, err := rand.Read(key[:]); err != nil {
		return fmt.Errorf("reading random bytes: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("key file %s already exists; remove it first to replace the key", path)
		}
		return fmt.Errorf("key file: %w", err)
	}
	if _, err := f.Write(key[:]); err != nil {
		_ = f.Close()
		return fmt.Errorf("key file %s: %w", path, err)
	}
	return f.Close()
}

// gitWorkTree returns the root of the git work tree that would hold path,
// and false when no directory above path's holds a .git entry. A key
// written there is one `git add .` away from being published: -genkey warns.
func gitWorkTree(path string) (string, bool) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
