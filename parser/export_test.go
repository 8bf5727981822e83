package parser

// IsBlank reports whether s is empty once the parser's spaces (Unicode
// spaces and the invisible characters of rule 11) are trimmed; the external
// tests use it as the oracle of a blank call name.
func IsBlank(s string) bool { return trim(s) == "" }
