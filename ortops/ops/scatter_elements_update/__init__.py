"""Everything about one ortops op; its specification is in spec.py."""
