// app.js — the example site's script: marks the page as loaded and shows how long it took.
'use strict'
document.addEventListener('DOMContentLoaded', function () {
  var footer = document.querySelector('footer p')
  if (!footer || !window.performance) return
  var ms = Math.round(performance.now())
  footer.textContent += ' — loaded in ' + ms + ' ms'
  footer.className = 'loaded'
})
