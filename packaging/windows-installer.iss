; Inno Setup recipe for the Windows installer (build the one-folder bundle first: packaging/build_bundle.sh).
; Installs dist\trinity-desktop\ and associates *.trinity.json with Trinity Desktop, so a double-clicked
; session or talk deck opens in the app (the path arrives as the first command-line argument).
#define AppName "Trinity Desktop"
#define AppVersion "0.1.0"

[Setup]
AppId={{6E7D1B0C-5B8B-4E4F-9F7A-2B7D3C1A9E10}
AppName={#AppName}
AppVersion={#AppVersion}
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
OutputBaseFilename=TrinityDesktop-{#AppVersion}-setup
ChangesAssociations=yes
Compression=lzma2
SolidCompression=yes

[Files]
Source: "..\dist\trinity-desktop\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\trinity-desktop.exe"

[Registry]
Root: HKA; Subkey: "Software\Classes\.trinity.json"; ValueType: string; ValueName: ""; ValueData: "TrinityDesktop.Session"; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\TrinityDesktop.Session"; ValueType: string; ValueName: ""; ValueData: "Trinity Desktop session"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\TrinityDesktop.Session\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\trinity-desktop.exe,0"
Root: HKA; Subkey: "Software\Classes\TrinityDesktop.Session\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\trinity-desktop.exe"" ""%1"""
