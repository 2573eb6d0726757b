"""MVL-SIB: image–sentence topic matching in the 205 SIB-200 languages."""
