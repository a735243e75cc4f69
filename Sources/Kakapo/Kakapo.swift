// The umbrella module: `import Kakapo` brings in every library module.
@_exported import KakapoCassette
@_exported import KakapoClient
@_exported import KakapoEngine
@_exported import KakapoHAR
@_exported import KakapoHTTP
@_exported import KakapoJSON
@_exported import KakapoProxy
@_exported import KakapoRecordFilter
@_exported import KakapoResources
@_exported import KakapoRouter
@_exported import KakapoRoutesFile
@_exported import KakapoStore
@_exported import KakapoStreams
@_exported import KakapoStubs
@_exported import KakapoURLSession
@_exported import KakapoUpstream
@_exported import KakapoVerify
