package web

// MessagesDE is the German catalogue, for the tests of package web_test.
var MessagesDE = messagesDE
