module github.com/OWNER/kakapo/clients/go

go 1.19
