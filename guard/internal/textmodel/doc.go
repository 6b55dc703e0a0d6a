// Package textmodel is the local text classifier of the prompt-injection
// filter (package guard): hashed n-gram features of the folded text, a
// linear model over them, the segmentation of a readable view into
// sentence windows, and the deterministic trainer that derives the embedded
// model from the training files under guard/testdata/train.
//
// Features are word unigrams and bigrams, the first words of a segment by
// their position, and character 4-grams of the folded text (case, accents
// and width folded as the filter's rules fold them), hashed into 2^Bits
// buckets. Words inside a quotation embedded in a sentence are hashed apart
// from the same words outside quotes, so that an article quoting an attack
// is weighed differently from the attack itself.
//
// A window is one segment (a sentence, a line, a markup-free run between
// tags, a JSON or CSV string value) or two adjacent segments. Its score is
// Bias + Scale·Σw/√n over the distinct features of each of its segments,
// so a pair's score comes from the sums of its two segments and every
// segment is read once. A window scoring at least Threshold is flagged.
//
// Train fits the model with stochastic gradient descent on the modified
// Huber loss, classes weighted equally. It picks the threshold by 5-fold
// cross-validation on the training data alone, repeated with three splits:
// the lowest score that at most a per-window target of the held-out benign
// windows and at most PassageTargetFP of the held-out benign passages reach.
// The per-window target p follows from the per-text requirement
// TextTargetFP: with W the most windows of any benign training passage,
// 1 − (1 − p)^W ≤ TextTargetFP, and p ≤ MaxWindowFP. Then it fits the final model on all
// of the data. Given the same files it writes the same bytes on every
// platform: the seed and the order are fixed, no transcendental functions
// are used, and floating-point products are rounded explicitly so no
// compiler fuses them.
package textmodel
