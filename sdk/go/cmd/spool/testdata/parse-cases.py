# The argument vectors parse_test.go checks; regenerate parse-cases.json with
#   python3 parse-cases.py | node node-oracle.mjs > parse-cases.json   (from this directory)
import json
C = []
def c(*a): C.append(list(a))
# step
c('step','a','--','echo','hi'); c('step','a','--label','Book it','--','true'); c('step','a','--label=','--','true')
c('step','a','--lable','x','--','true'); c('step','a','--label'); c('step','a','--label','--','x')
c('step','a','--label','-x','--','x'); c('step','a','--label=-x','--','x'); c('step','a','-x','--','x'); c('step','a','-xy','--','x')
c('step','a','--lable=x','--','t'); c('step','a','echo','hi'); c('step','a','--'); c('step','--','x'); c('step','a','b','--','x')
c('step'); c('step','a','--no-label','--','x'); c('step','a','--label','x','--label','y','--','z'); c('step','a','--','--','x')
c('step','a','---x','--','t'); c('step','a','--=x','--','t'); c('step','a','--=a=b','--','t'); c('step','a','-','--','t')
c('step','a','-\U0001F600','--','t'); c('step','a','--\u00e9=1','--','t'); c('step','a b\n"q"\t\\ <&> \u2028 \x01 \x7f','--','t')
# sleep
for d in ['500ms','30s','5m','2h','14d','1h30m','1.5h',' 2s ','0s','1m5s','1.','1.5.5s','-1','','  ','5','5x','1ms2','1e3s','0.0004ms','0.5ms','99999999999999999999999d','1'*400+'s','\u00a05s\ufeff','\u2003']:
    c('sleep', d)
c('sleep','-1s'); c('sleep','-0.5m'); c('sleep','999999999999d'); c('sleep','36525d'); c('sleep','36526d'); c('wait','signal','go','--timeout=-5s')
c('sleep'); c('sleep','5s','6s'); c('sleep','--','-1'); c('sleep','5s','--','x'); c('sleep','---x'); c('sleep','-'); c('sleep','--')
# wait
c('wait','signal','go'); c('wait','signal','go','--timeout','1h'); c('wait','event','order.paid','--timeout=30s'); c('wait','event','t','--timeout','x')
c('wait','signal'); c('wait','foo','x'); c('wait'); c('wait','signal','a','b'); c('wait','event','t','--timeout')
# lock
c('lock','g'); c('lock','g','--','echo','x'); c('lock','g','--'); c('lock'); c('lock','g','h'); c('lock','g','--x')
# activity
c('activity','submit','probe','--','curl','-s','x'); c('activity','run','probe','--requires','gpu,eu','--requires','x','--attempts','3','--backoff','2s','--retry-on-exit','2, 3','--','x')
c('activity','run','p','--requires=','--','x'); c('activity','run','p','--retry-on-exit','0','--','x'); c('activity','run','p','--retry-on-exit','','--','x')
c('activity','run','p','--attempts','0','--','x'); c('activity','run','p','--attempts','1.5','--','x'); c('activity','run','p','--attempts','007','--','x')
c('activity','run','p','--attempts','9'*400,'--','x'); c('activity','run','p','--backoff','xs','--','x'); c('activity','run','p','echo'); c('activity','run','--','x')
c('activity','run','p','--retry-on-exit','x','--attempts','0','--backoff','bad','--','x'); c('activity','run','p','--attempts','0','--backoff','bad','--','x')
c('activity','wait','p'); c('activity','wait','--all'); c('activity','wait','--all','p'); c('activity','wait'); c('activity','wait','--all=x'); c('activity','wait','--all','--all')
c('activity','collect','x'); c('activity','collect'); c('activity','collect','x','y'); c('activity','wait-all'); c('activity','wait-all','x'); c('activity','frob'); c('activity'); c('activity','run','p','--retry-on-exit','\u00a07\ufeff','--','x')
# state
c('state','get','k'); c('state','get','k','--entity','acct:1'); c('state','get'); c('state','get','k','--entity'); c('state','get','k','--entity','--x'); c('state','get','k','-e')
c('state','get','k','--entity','-'); c('state','get','k','--entity','--'); c('state','delete','k'); c('state','version','k','--entity=e')
c('state','set','k','v'); c('state','set','k','-1'); c('state','set','k','-'); c('state','set','k'); c('state','set','k','v','--entity','e'); c('state','set','k','--','-1')
c('state','list'); c('state','list','p/'); c('state','list',''); c('state','list','--entity=e','--entity','f'); c('state','list','a','b')
c('state','add','k'); c('state','add','k','v'); c('state','add','k',''); c('state','add','k','v','--entity','e'); c('state','add','k','v','w')
c('state','incr','k'); c('state','incr','k','--by','5'); c('state','incr','k','--by','-5'); c('state','incr','k','--by=-5'); c('state','incr','k','--by','x'); c('state','incr','k','--by=-9007199254740993')
c('state','incr','k','--by=-9007199254740991'); c('state','incr','k','--by','123456789012345678901234'); c('state','incr','k','--by=-0'); c('state','incr','k','--op','o1','--entity','e'); c('state','incr','k','--op='); c('state','incr','k','--op','-x')
c('state','cas','k','','v'); c('state','cas','k','old','new','--op','o'); c('state','cas','k','a'); c('state','cas','k','a','b','--entity','e')
c('state','frob'); c('state')
# event
c('event','emit','order.paid'); c('event','emit','t','--key','acct-1','--payload','{"a": [1, 2.50, "x"], "b": {}}'); c('event','emit','t','--payload','{'); c('event','emit','t','--payload','x'*70)
c('event','emit','t','--payload','\U0001F600'*40); c('event','emit','t','--key=','--payload','null'); c('event','emit'); c('event','fire','x'); c('event')
for p in ['[1,]','{"a" 1}','{"a":1,}','[1 2]',' ','1 2','{"b":1,"a":2,"1":3,"0":4,"b":5,"01":6,"4294967295":7,"4294967294":8}','1e400','-0','1E2','0.1e-7','123456789012345678901234567890','[true,false,null,"\\u00e9\\n"]','{"a":{"b":[{}]}}','01','.5','+1','[1,2',' {"a" : 1 } ','\ufeff1','nul']:
    c('event','emit','t','--payload',p)
# children
c('spawn','testdata/child.sh'); c('call','testdata/child.py','--input','{"n":1}'); c('spawn','testdata/child.txt'); c('spawn','testdata/missing.sh'); c('spawn','testdata')
c('call','testdata/child.sh','--input','nope'); c('spawn','testdata/invalid.sh'); c('spawn'); c('spawn','testdata/child.sh','extra'); c('spawn','testdata/child.txt','--input','bad')
c('call','testdata/missing.yaml'); c('spawn','testdata/missing.YML','--input','{}'); c('call','testdata/missing.sh','--input','nope')
c('call','testdata/missing.json'); c('call','testdata/graph.json','--input','{"x":"7"}'); c('spawn','testdata/graph.yaml')
c('call-node','http','--config','{"url":"http://x"}'); c('call-node','sleep','--config','{"duration":"1s"}','--name','nap'); c('call-node','http'); c('call-node','http','--config','[1]'); c('call-node','http','--config','nope'); c('call-node','--config','{}'); c('call-node','http','--config',' {}','--name','')
c('call-graph','testdata/graph.json','--input','{"x":1}'); c('call-graph','testdata/graph.yaml'); c('call-graph','testdata/child.sh'); c('call-graph','testdata/missing.json'); c('call-graph'); c('call-graph','tiny','--input','{"x":"7"}'); c('spawn','nope')
# output, annotate
c('output','set','k','v'); c('output','set','k'); c('output','get','k'); c('output'); c('annotate','hello world'); c('annotate'); c('annotate','a','b')
# artifact
c('artifact','put','build.tar','out/build.tar'); c('artifact','put','log','-'); c('artifact','put','r','r.json','--type','application/json'); c('artifact','put','r','f','--type=')
c('artifact','put','r'); c('artifact','put'); c('artifact','put','a','b','c'); c('artifact','put','a','b','--type'); c('artifact','put','a','b','--typ','x')
c('artifact','get','build.tar'); c('artifact','get','dist/app.tar.gz'); c('artifact','get','x','-'); c('artifact','get','x','out','--run','dev:default:run-abc')
c('artifact','get','x','--run=r'); c('artifact','get','x','--run='); c('artifact','get','../'); c('artifact','get','a/..'); c('artifact','get'); c('artifact','get','a','b','c'); c('artifact','get','x','--run')
c('artifact','list'); c('artifact','list','--json'); c('artifact','list','--run','r','--json'); c('artifact','list','x'); c('artifact','list','--json=1'); c('artifact','list','--js')
c('artifact','frob'); c('artifact')
# checkout
c('checkout'); c('checkout','src'); c('checkout','-'); c('checkout','a','b'); c('checkout','--into','x')
print(json.dumps(C))
