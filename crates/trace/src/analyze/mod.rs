//! What a trace holds: composition, sizes, popularity, locality and reuse, computed in one
//! streaming pass whose memory is bounded by the distinct keys, not the requests.
