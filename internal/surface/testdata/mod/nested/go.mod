module example.com/mod/nested

go 1.26
