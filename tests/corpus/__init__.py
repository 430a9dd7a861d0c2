"""The function corpus: realistic user functions that every transform is checked on."""
