// Cut text to at most n characters, ending with an ellipsis when cut, never in the middle of a word if avoidable.
function truncate(text, n) {
  if (text.length <= n) return text;
  const cut = text.slice(0, Math.max(0, n - 1));
  const space = cut.lastIndexOf(" ");
  return (space > 0 ? cut.slice(0, space) : cut) + "…";
}

module.exports = { truncate };
