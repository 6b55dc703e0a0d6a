// Package embed holds the clients of the embedding providers: an
// OpenAI-compatible POST <base>/embeddings and Ollama's POST <base>/api/embed,
// behind one small Embedder interface that the mail index and the local
// document index both use.
//
// It turns texts into vectors and checks what comes back (one finite vector
// per text, all of one size); it knows nothing of mail, documents or
// policy, stores nothing, and never logs or quotes the texts it sends or an
// error body that may echo them.
package embed
