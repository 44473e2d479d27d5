package tickets

// BreakFile closes the store's file underneath it, so every later write
// fails the way a full or vanished disk would.
func BreakFile(s *Store) error { return s.file.db.Close() }
