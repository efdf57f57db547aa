// Package nodecompat does to text and numbers what Node does, where the native client must
// produce the same bytes as the Node client: JSON.stringify's escaping and number format, and
// the replacement of invalid UTF-8 a Buffer's decoding makes.
package nodecompat
