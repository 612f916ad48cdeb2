package search

// SetBitmapMin sets the posting size past which a term's SET becomes a
// bitmap (256 in production), so small corpora exercise bitmaps.
func SetBitmapMin(x *Index, n int) { x.bitmapMin = n }
