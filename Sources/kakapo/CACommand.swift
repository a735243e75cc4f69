import ArgumentParser
import Foundation
import KakapoTLS

/// `kakapo ca`: where Kakapo's CA certificate is, and how to make clients trust it.
struct CACommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "Kakapo's local certificate authority, which signs intercepted hosts' certificates.",
        subcommands: [Path.self, Trust.self])

    struct Options: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "The CA's folder (default $HOME/.kakapo/ca); a relative path is taken from the working directory.",
                valueName: "dir"))
        var caDir: String?

        /// The CA, created on first use; exit 3 with the reason when it cannot be.
        func authority() throws -> CertificateAuthority {
            do {
                return try CertificateAuthority.loadOrCreate(directory: caDir ?? CertificateAuthority.defaultDirectory)
            } catch {
                throw ExitStatus.failure(error)
            }
        }
    }

    /// `kakapo ca path`: prints the CA certificate's path (creating the CA on first use).
    struct Path: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the path of the CA certificate (PEM), creating the CA on first use.")

        @OptionGroup var options: Options

        func run() throws {
            print(try options.authority().certificatePath)
        }
    }

    /// `kakapo ca trust`: prints how to trust the CA on the usual systems.
    struct Trust: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Print how to trust the CA on macOS, Debian/Ubuntu, an iOS simulator, in Chromium and Firefox, and in common clients."
        )

        @OptionGroup var options: Options

        func run() throws {
            let path = try options.authority().certificatePath
            print(
                """
                Kakapo's CA certificate: \(path)
                Trust it only on machines you test on; anyone with its key (\(CertificateAuthority.keyFileName), mode 0600,
                beside it) can impersonate any site to them.

                macOS (system keychain):
                  sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain "\(path)"

                Debian / Ubuntu:
                  sudo cp "\(path)" /usr/local/share/ca-certificates/kakapo-ca.crt
                  sudo update-ca-certificates

                iOS simulator (booted):
                  xcrun simctl keychain booted add-root-cert "\(path)"

                Chromium and Chrome on Linux (their own NSS store; certutil is in libnss3-tools):
                  mkdir -p "$HOME/.pki/nssdb" && certutil -d sql:"$HOME/.pki/nssdb" -N --empty-password   (first time only)
                  certutil -d sql:"$HOME/.pki/nssdb" -A -t C,, -n kakapo -i "\(path)"
                  chromium --proxy-server=http://127.0.0.1:8080 --proxy-bypass-list='<-loopback>'
                  (without --proxy-bypass-list='<-loopback>' Chromium sends localhost and 127.0.0.1 around the proxy)

                Firefox (NSS, per profile): Settings > Privacy & Security > Certificates > View Certificates >
                Authorities > Import "\(path)", tick "Trust this CA to identify websites"; or, Firefox closed:
                  certutil -d sql:"<profile folder>" -A -t C,, -n kakapo -i "\(path)"
                For localhost through the proxy, set network.proxy.allow_hijacking_localhost to true in about:config.

                One client only, nothing installed:
                  curl --proxy http://127.0.0.1:8080 --cacert "\(path)" https://api.example.com/
                  REQUESTS_CA_BUNDLE="\(path)" python3 app.py      (Python requests)
                  NODE_EXTRA_CA_CERTS="\(path)" node app.js
                  SSL_CERT_FILE="\(path)" ...                      (OpenSSL-based tools)

                To remove it: delete the certificate from the store you added it to (NSS: certutil -d sql:<dir> -D -n kakapo), then remove \((path as NSString).deletingLastPathComponent).
                """)
        }
    }
}
