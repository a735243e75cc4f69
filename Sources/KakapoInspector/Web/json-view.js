// json-view.js: placeholder, written by the front-end work of issue 32.
