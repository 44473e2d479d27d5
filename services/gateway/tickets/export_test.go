package tickets

// BreakFile closes the store's file underneath it, so every later write
// fails the way a full or vanished disk would.
func BreakFile(s *Store) error { return s.file.db.Close() }

// Crash stops the store the way a killed process does: the writer stops
// and the file is closed without writing what is still behind.
func Crash(s *Store) error {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
	return s.file.db.Close()
}

// Behind counts the issued tickets not yet in the file.
func Behind(s *Store) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.behind)
}
